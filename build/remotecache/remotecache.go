// Package remotecache is a client of a shared action cache spoken to
// through the Bazel HTTP remote cache protocol: GET, PUT and HEAD on
// BASE/ac/<name> (an action's record) and BASE/cas/<sha256> (a file,
// under the sha256 of its bytes). Servers that speak it include
// bazel-remote, BuildBuddy and any WebDAV server accepting PUT, such as
// nginx with dav_methods PUT.
//
// # Layout
//
// Every writer has a record slot of its own for each action: its record of
// the action KEY is stored under BASE/ac/SLOT, where SLOT ([Slot]) is the
// sha256, in lowercase hex, of
//
//	"mkrelease-action-record/v1" NUL KEY NUL WRITER
//
// and WRITER is the key id of the writer's signing key (the lowercase hex
// sha256 of its DER public key, as mkrelease names keys). SLOT is 64 hex
// digits like any Bazel action key, so servers that check the form of
// /ac/ names take it. One writer never writes into another's slot, so an
// honest writer cannot overwrite another's record; and a writer never
// replaces its own record either ([Client.PutRecord] asks first, and sends
// If-None-Match: *), unless told to repair one that does not verify. The
// protocol gives no listing: a reader asks for the slots of the writers it
// trusts. BASE/ac/KEY itself, where Bazel and mkrelease before signed
// records put theirs, is read as one more place a record may be (the
// writer "" of [Client.GetRecord]) and never written.
//
// The record is mkrelease's own (a signed statement naming the action key,
// step and target, and each output's path, size, mode and sha256), not
// Bazel's ActionResult protobuf: nginx and other WebDAV stores keep any
// bytes, while bazel-remote keeps them only when run with its action cache
// validation off (--disable_http_ac_validation).
//
// The client trusts nothing: it only moves bytes, bounded in size and
// time. Checking what it downloads (the record's signature, every blob
// re-hashed, the record listing exactly the declared outputs) is its
// caller's work (package build, and [actioncache.Cache.Import]). A missing
// record or blob is an error wrapping [actioncache.ErrMiss]; every other
// failure (the server down, slow or answering an error status) is an
// [*Error].
package remotecache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Defaults of [Options].
const (
	DefaultTimeout        = 60 * time.Second
	DefaultConnectTimeout = 5 * time.Second
)

// Options configure a [Client].
type Options struct {
	// URL is the cache's base, http:// or https://, without credentials
	// ([CheckURL]).
	URL string
	// Token, when set, is sent as "Authorization: Bearer TOKEN".
	Token string
	// Netrc is a netrc file; the login and password of the URL's host (or
	// its default entry) are sent as basic authentication when Token is
	// empty. A missing file means no credentials.
	Netrc string
	// Timeout bounds each request, its transfer included (default
	// [DefaultTimeout]); ConnectTimeout bounds connecting (default
	// [DefaultConnectTimeout]).
	Timeout        time.Duration
	ConnectTimeout time.Duration
	// MaxBlobSize bounds a blob downloaded whose size is not known ahead
	// (default 4 GiB); a blob of known size is cut one byte past that size.
	MaxBlobSize int64
}

// Client talks to one remote cache.
type Client struct {
	base    string // without the trailing slash
	http    *http.Client
	timeout time.Duration
	auth    func(*http.Request)
	maxBlob int64
}

// Error is a failure of the remote cache itself: it could not be reached,
// it took too long, or it answered with an unexpected status.
type Error struct {
	Op     string // "GET", "PUT", "HEAD"
	URL    string
	Status int // the HTTP status, 0 when there was no answer
	Err    error
}

// Error names the request and what went wrong.
func (e *Error) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("remote cache: %s %s: %s", e.Op, e.URL, http.StatusText(e.Status)+" ("+strconv.Itoa(e.Status)+")")
	}
	return fmt.Sprintf("remote cache: %s %s: %v", e.Op, e.URL, e.Err)
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// CheckURL reports why s cannot be a remote cache's base URL: it must be
// an absolute http:// or https:// URL with a host, and carry no
// credentials (user:password@), query or fragment. Credentials come from
// an environment variable or a netrc file instead, so that release.toml
// and command lines never hold them.
func CheckURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL: %v", s, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q is not an http:// or https:// URL", s)
	case u.User != nil:
		return fmt.Errorf("the URL %s holds credentials: take them out and name an environment variable holding a token (remote_token_env), or put them in a netrc file", u.Redacted())
	case u.Host == "" || u.Hostname() == "":
		return fmt.Errorf("%q names no host", s)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return fmt.Errorf("%q has a query or fragment: a cache URL is scheme://host[:port][/prefix]", s)
	}
	return nil
}

// New returns a client of the cache at o.URL.
func New(o Options) (*Client, error) {
	if err := CheckURL(o.URL); err != nil {
		return nil, fmt.Errorf("remote cache: %w", err)
	}
	u, _ := url.Parse(o.URL)
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.ConnectTimeout <= 0 {
		o.ConnectTimeout = DefaultConnectTimeout
	}
	if o.MaxBlobSize <= 0 {
		o.MaxBlobSize = 4 << 30
	}
	c := &Client{base: strings.TrimSuffix(o.URL, "/"), timeout: o.Timeout, maxBlob: o.MaxBlobSize, auth: func(*http.Request) {}}
	switch {
	case o.Token != "":
		c.auth = func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+o.Token) }
	case o.Netrc != "":
		login, password, err := netrcLookup(o.Netrc, u.Hostname())
		if err != nil {
			return nil, fmt.Errorf("remote cache %s: %w", o.URL, err)
		}
		if login != "" || password != "" {
			c.auth = func(r *http.Request) { r.SetBasicAuth(login, password) }
		}
	}
	dialer := &net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}
	c.http = &http.Client{
		Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   o.ConnectTimeout,
			ResponseHeaderTimeout: o.Timeout,
			MaxIdleConnsPerHost:   4,
			IdleConnTimeout:       90 * time.Second,
		},
		// A redirect could carry the credentials elsewhere: none is followed.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// String is the cache's base URL.
func (c *Client) String() string { return c.base }

func (c *Client) url(kind, hash string) (string, error) {
	if !checksum.IsSHA256(hash) {
		return "", fmt.Errorf("remote cache: %q is not a sha256 in lowercase hex", hash)
	}
	return c.base + "/" + kind + "/" + hash, nil
}

// do sends one request bounded by the client's timeout; the caller reads
// the body within the same bound through the returned cancel.
func (c *Client) do(ctx context.Context, method, u string, body io.Reader, size int64, header http.Header) (*http.Response, context.CancelFunc, error) {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		cancel()
		return nil, nil, &Error{Op: method, URL: u, Err: err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if body != nil {
		req.ContentLength = size
		req.Header.Set("Content-Type", "application/octet-stream")
	}
	c.auth(req)
	resp, err := c.http.Do(req)
	if err != nil {
		cancel()
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // it repeats the method and URL
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v", c.timeout)
		}
		return nil, nil, &Error{Op: method, URL: u, Err: err}
	}
	return resp, cancel, nil
}

// get downloads u into w, copying at most limit+1 bytes, and returns how
// many it copied: the caller decides what a body longer than limit means.
// A body the server announces (Content-Length) longer than limit is not
// read at all; one announced with another length than size (when size is
// not negative) neither: the error wraps [actioncache.ErrBlobSize].
func (c *Client) get(ctx context.Context, u string, w io.Writer, limit, size int64) (int64, error) {
	resp, cancel, err := c.do(ctx, http.MethodGet, u, nil, 0, nil)
	if err != nil {
		return 0, err
	}
	defer cancel()
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return 0, fmt.Errorf("remote cache: GET %s: %w", u, actioncache.ErrMiss)
	case resp.StatusCode != http.StatusOK:
		return 0, &Error{Op: http.MethodGet, URL: u, Status: resp.StatusCode}
	case size >= 0 && resp.ContentLength >= 0 && resp.ContentLength != size:
		return 0, fmt.Errorf("remote cache: GET %s: %w: the server announces %d bytes, the record %d", u, actioncache.ErrBlobSize, resp.ContentLength, size)
	case resp.ContentLength > limit:
		return 0, &Error{Op: http.MethodGet, URL: u, Err: fmt.Errorf("the server announces %d bytes, more than the %d accepted", resp.ContentLength, limit)}
	}
	n, err := io.Copy(markedWriter{w}, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		var we *writeError
		if errors.As(err, &we) {
			return n, we.err // the destination's failure, not the server's
		}
		if errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("the transfer did not finish within %v", c.timeout)
		}
		return n, &Error{Op: http.MethodGet, URL: u, Err: fmt.Errorf("reading the body: %w", err)}
	}
	return n, nil
}

// writeError marks a failure of the writer get copies to.
type writeError struct{ err error }

func (e *writeError) Error() string { return e.err.Error() }

type markedWriter struct{ w io.Writer }

func (m markedWriter) Write(p []byte) (int, error) {
	n, err := m.w.Write(p)
	if err != nil {
		err = &writeError{err}
	}
	return n, err
}

// slotPrefix starts what a writer's record slot is the sha256 of.
const slotPrefix = "mkrelease-action-record/v1\x00"

// Slot is the name under /ac/ of writer's record of the action key: the
// sha256, in lowercase hex, of "mkrelease-action-record/v1", NUL, key,
// NUL, writer (see the package documentation). writer "" is key itself.
func Slot(key, writer string) string {
	if writer == "" {
		return key
	}
	return checksum.Bytes([]byte(slotPrefix + key + "\x00" + writer))
}

// recordURL is the URL of writer's record of key; it refuses a key or a
// writer that is not a sha256 in lowercase hex.
func (c *Client) recordURL(key, writer string) (string, error) {
	if writer != "" && !checksum.IsSHA256(writer) {
		return "", fmt.Errorf("remote cache: writer %q is not a key id (a sha256 in lowercase hex)", writer)
	}
	if !checksum.IsSHA256(key) {
		return "", fmt.Errorf("remote cache: %q is not a sha256 in lowercase hex", key)
	}
	return c.url("ac", Slot(key, writer))
}

// GetRecord returns writer's record of the action key, stored in its slot
// ([Slot]; writer "" reads BASE/ac/KEY), at most
// [actioncache.MaxEntrySize] bytes. Nothing in it is checked: anyone with
// upload rights can write any slot.
func (c *Client) GetRecord(ctx context.Context, key, writer string) ([]byte, error) {
	u, err := c.recordURL(key, writer)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	n, err := c.get(ctx, u, &b, actioncache.MaxEntrySize, -1)
	switch {
	case err != nil:
		return nil, err
	case n > actioncache.MaxEntrySize:
		return nil, &Error{Op: http.MethodGet, URL: u, Err: fmt.Errorf("the record is larger than %d bytes", actioncache.MaxEntrySize)}
	}
	return b.Bytes(), nil
}

// PutRecord stores record as writer's record of the action key, in its
// slot ([Slot]; writer may not be ""), and says whether it did. A slot
// that holds a record already is left as it is (stored is false): the
// client asks first (HEAD), and sends the PUT with If-None-Match: *, which
// servers that honour it (412 Precondition Failed) hold to even when
// another run stores the record in between; nginx's WebDAV module does
// not, and there the question before is what keeps a record. With replace
// set, the slot is written whatever it holds: for a writer repairing its
// own slot, whose record did not verify.
func (c *Client) PutRecord(ctx context.Context, key, writer string, record []byte, replace bool) (stored bool, err error) {
	if writer == "" {
		return false, errors.New("remote cache: a record is stored in its writer's slot, and this one names no writer")
	}
	u, err := c.recordURL(key, writer)
	if err != nil {
		return false, err
	}
	if !replace {
		has, err := c.has(ctx, u)
		if err != nil || has {
			return false, err
		}
	}
	status, err := c.put(ctx, u, bytes.NewReader(record), int64(len(record)), !replace)
	if status == http.StatusPreconditionFailed {
		return false, nil
	}
	return err == nil, err
}

// GetBlob writes the blob stored under /cas/SHA256 to w. size is the size
// the caller expects (negative: unknown, then at most MaxBlobSize): a blob
// the server announces with another length is not downloaded (the error
// wraps [actioncache.ErrBlobSize]), and the download stops one byte past
// size, so that the caller sees it is too long. The bytes are not checked
// against sha256: the caller hashes what it gets.
func (c *Client) GetBlob(ctx context.Context, sha256 string, size int64, w io.Writer) error {
	u, err := c.url("cas", sha256)
	if err != nil {
		return err
	}
	limit := c.maxBlob
	if size >= 0 {
		limit = size // one byte more is copied: the caller sees it is too long
	}
	n, err := c.get(ctx, u, w, limit, size)
	if err == nil && size < 0 && n > limit {
		return &Error{Op: http.MethodGet, URL: u, Err: fmt.Errorf("the blob is larger than %d bytes", limit)}
	}
	return err
}

// HasBlob reports whether /cas/SHA256 exists (HEAD).
func (c *Client) HasBlob(ctx context.Context, sha256 string) (bool, error) {
	u, err := c.url("cas", sha256)
	if err != nil {
		return false, err
	}
	return c.has(ctx, u)
}

// has reports whether u exists (HEAD).
func (c *Client) has(ctx context.Context, u string) (bool, error) {
	resp, cancel, err := c.do(ctx, http.MethodHead, u, nil, 0, nil)
	if err != nil {
		return false, err
	}
	defer cancel()
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
		return true, nil
	case http.StatusNotFound:
		return false, nil
	}
	return false, &Error{Op: http.MethodHead, URL: u, Status: resp.StatusCode}
}

// PutBlob stores the size bytes of r under /cas/SHA256. A blob is named by
// its bytes: storing it again over a copy (a damaged one) is a repair.
func (c *Client) PutBlob(ctx context.Context, sha256 string, size int64, r io.Reader) error {
	u, err := c.url("cas", sha256)
	if err != nil {
		return err
	}
	_, err = c.put(ctx, u, r, size, false)
	return err
}

// put sends the size bytes of r to u, with If-None-Match: * when
// onlyNew is set, and returns the status the server answered (0 when
// there was no answer) and, for any status but 2xx, an *Error.
func (c *Client) put(ctx context.Context, u string, r io.Reader, size int64, onlyNew bool) (int, error) {
	var body io.Reader = http.NoBody
	if size > 0 {
		body = io.LimitReader(r, size)
	}
	var header http.Header
	if onlyNew {
		header = http.Header{"If-None-Match": {"*"}}
	}
	resp, cancel, err := c.do(ctx, http.MethodPut, u, body, size, header)
	if err != nil {
		return 0, err
	}
	defer cancel()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return resp.StatusCode, &Error{Op: http.MethodPut, URL: u, Status: resp.StatusCode}
	}
	return resp.StatusCode, nil
}

// NetrcFile is the netrc file credentials are read from: $NETRC, else
// .netrc in home ("" when home is empty).
func NetrcFile(getenv func(string) string, home string) string {
	if f := getenv("NETRC"); f != "" {
		return f
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".netrc")
}

// netrcLookup returns the login and password of host in the netrc file
// name, or of its default entry; a missing file has none.
func netrcLookup(name, host string) (login, password string, err error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("read netrc: %w", err)
	}
	var words []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	inMacro := false
	for sc.Scan() {
		line := sc.Text()
		if inMacro {
			if strings.TrimSpace(line) == "" {
				inMacro = false
			}
			continue
		}
		fields := strings.Fields(line)
		if len(fields) > 0 && strings.HasPrefix(fields[0], "#") {
			continue
		}
		for i, f := range fields {
			if f == "macdef" {
				inMacro = true
				fields = fields[:i]
				break
			}
		}
		words = append(words, fields...)
	}
	type entry struct{ login, password string }
	var found, def *entry
	var cur *entry
	for i := 0; i < len(words); i++ {
		next := func() string {
			if i+1 < len(words) {
				i++
				return words[i]
			}
			return ""
		}
		switch words[i] {
		case "machine":
			cur = nil
			if m := next(); m == host && found == nil {
				found = &entry{}
				cur = found
			}
		case "default":
			cur = nil
			if def == nil {
				def = &entry{}
				cur = def
			}
		case "login":
			if v := next(); cur != nil {
				cur.login = v
			}
		case "password":
			if v := next(); cur != nil {
				cur.password = v
			}
		case "account":
			next()
		}
	}
	switch {
	case found != nil:
		return found.login, found.password, nil
	case def != nil:
		return def.login, def.password, nil
	}
	return "", "", nil
}
