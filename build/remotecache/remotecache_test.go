package remotecache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/actioncache"
)

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// store is an in-memory WebDAV-like server: GET, HEAD and PUT on any path.
// Like nginx's WebDAV module, it ignores If-None-Match on PUT.
type store struct {
	mu    sync.Mutex
	files map[string][]byte
	auth  []string // the Authorization headers seen
}

func (s *store) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.auth = append(s.auth, r.Header.Get("Authorization"))
	switch r.Method {
	case http.MethodPut:
		b, _ := io.ReadAll(r.Body)
		s.files[r.URL.Path] = b
		w.WriteHeader(http.StatusCreated)
	case http.MethodGet, http.MethodHead:
		b, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(b)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func newStore(t *testing.T) (*store, *httptest.Server) {
	s := &store{files: map[string][]byte{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func client(t *testing.T, o Options) *Client {
	t.Helper()
	c, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"http://127.0.0.1:9090/mk", ""},
		{"https://cache.example.org", ""},
		{"https://cache.example.org/a/b/", ""},
		{"ftp://cache.example.org/x", "not an http:// or https:// URL"},
		{"cache.example.org/x", "not an http:// or https:// URL"},
		{"https://ci:s3cret@cache.example.org/x", "holds credentials"},
		{"https://ci@cache.example.org/x", "holds credentials"},
		{"https:///x", "names no host"},
		{"https://cache.example.org/x?k=v", "query or fragment"},
		{"https://cache.example.org/x#f", "query or fragment"},
	} {
		err := CheckURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("CheckURL(%q) = %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("CheckURL(%q) = %v, want %q", tc.url, err, tc.want)
		case err != nil && strings.Contains(err.Error(), "s3cret"):
			t.Errorf("CheckURL(%q) repeats the password: %v", tc.url, err)
		}
	}
}

// The protocol's paths: BASE/ac/SLOT and BASE/cas/SHA256; a missing key is
// actioncache.ErrMiss.
func TestRoundTrip(t *testing.T) {
	s, srv := newStore(t)
	c := client(t, Options{URL: srv.URL + "/prefix/"})
	ctx := context.Background()
	key := sum([]byte("action"))
	writer := sum([]byte("writer"))
	blob := []byte("hello\n")
	if _, err := c.GetRecord(ctx, key, writer); !errors.Is(err, actioncache.ErrMiss) {
		t.Fatalf("GetRecord of a missing key = %v, want ErrMiss", err)
	}
	if has, err := c.HasBlob(ctx, sum(blob)); err != nil || has {
		t.Fatalf("HasBlob of a missing blob = %v, %v", has, err)
	}
	if err := c.PutBlob(ctx, sum(blob), int64(len(blob)), bytes.NewReader(blob)); err != nil {
		t.Fatal(err)
	}
	if stored, err := c.PutRecord(ctx, key, writer, []byte(`{"key":"x"}`), false); err != nil || !stored {
		t.Fatalf("PutRecord = %v, %v", stored, err)
	}
	if _, ok := s.files["/prefix/ac/"+Slot(key, writer)]; !ok {
		t.Errorf("stored %v, want /prefix/ac/%s", s.files, Slot(key, writer))
	}
	if _, ok := s.files["/prefix/cas/"+sum(blob)]; !ok {
		t.Errorf("stored %v, want /prefix/cas/%s", s.files, sum(blob))
	}
	if has, err := c.HasBlob(ctx, sum(blob)); err != nil || !has {
		t.Fatalf("HasBlob = %v, %v", has, err)
	}
	got, err := c.GetRecord(ctx, key, writer)
	if err != nil || string(got) != `{"key":"x"}` {
		t.Fatalf("GetRecord = %q, %v", got, err)
	}
	if _, err := c.GetRecord(ctx, key, ""); !errors.Is(err, actioncache.ErrMiss) {
		t.Errorf("GetRecord under the key itself = %v, want ErrMiss (the record is in its writer's slot)", err)
	}
	if _, err := c.PutRecord(ctx, key, "", []byte("x"), false); err == nil {
		t.Error("PutRecord stored a record under the key itself")
	}
	if _, err := c.GetRecord(ctx, key, "ABC"); err == nil {
		t.Error("GetRecord took a writer that is not a key id")
	}
	var b bytes.Buffer
	if err := c.GetBlob(ctx, sum(blob), int64(len(blob)), &b); err != nil || b.String() != "hello\n" {
		t.Fatalf("GetBlob = %q, %v", b.String(), err)
	}
	if err := c.GetBlob(ctx, "not-a-sha", 1, &b); err == nil {
		t.Error("GetBlob accepted a bad digest")
	}
}

// A blob longer than asked for is cut one byte past the size: the caller
// sees it is too long without downloading all of it.
func TestGetBlobStopsPastSize(t *testing.T) {
	s, srv := newStore(t)
	c := client(t, Options{URL: srv.URL})
	h := sum([]byte("x"))
	s.files["/cas/"+h] = bytes.Repeat([]byte("x"), 1<<20)
	var b bytes.Buffer
	if err := c.GetBlob(context.Background(), h, 3, &b); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 4 {
		t.Errorf("copied %d bytes, want 4", b.Len())
	}
	s.files["/ac/"+h] = bytes.Repeat([]byte("x"), actioncache.MaxEntrySize+1)
	var e *Error
	if _, err := c.GetRecord(context.Background(), h, ""); !errors.As(err, &e) || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("GetRecord of an oversized record = %v", err)
	}
}

// A server answering 5xx, redirecting, slow, or down is an *Error: the
// caller degrades to the local cache.
func TestFailuresAreErrors(t *testing.T) {
	key := sum([]byte("k"))
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) }, "Service Unavailable (503)"},
		{"401", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401) }, "Unauthorized (401)"},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://elsewhere.invalid/", http.StatusTemporaryRedirect)
		}, "(307)"},
		{"slow headers", func(w http.ResponseWriter, r *http.Request) { time.Sleep(time.Second) }, "no answer within 200ms"},
		{"slow body", func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("{"))
			w.(http.Flusher).Flush()
			time.Sleep(time.Second)
		}, "did not finish within 200ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(tc.handler)
			defer srv.Close()
			c := client(t, Options{URL: srv.URL, Timeout: 200 * time.Millisecond})
			start := time.Now()
			_, err := c.GetRecord(ctx, key, "")
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("GetRecord = %v, want an *Error with %q", err, tc.want)
			}
			if errors.Is(err, actioncache.ErrMiss) {
				t.Error("a failure reads as a miss")
			}
			if d := time.Since(start); d > 900*time.Millisecond {
				t.Errorf("took %v, want about the 200ms timeout", d)
			}
			if tc.name == "slow body" {
				return // a PUT is answered before the body is slow
			}
			err = c.PutBlob(ctx, key, 1, strings.NewReader("x"))
			if !errors.As(err, &e) {
				t.Errorf("PutBlob = %v, want an *Error", err)
			}
		})
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close() // down
	c := client(t, Options{URL: srv.URL})
	if _, err := c.GetRecord(ctx, key, ""); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("GetRecord of a stopped server = %v", err)
	}
}

// Credentials: a token as a bearer header; else the netrc entry of the
// URL's host, else its default entry; nothing when there is none.
func TestCredentials(t *testing.T) {
	s, srv := newStore(t)
	ctx := context.Background()
	key := sum([]byte("k"))
	netrc := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(netrc, []byte("# comment\nmachine other.example login a password b\nmachine 127.0.0.1\n  login ci\n  password s3cret\ndefault login anon password x\n"), 0o600)
	defOnly := filepath.Join(t.TempDir(), "netrc")
	os.WriteFile(defOnly, []byte("machine other.example login a password b\nmacdef init\ncd /\n\ndefault login anon password x\n"), 0o600)
	for _, tc := range []struct {
		name string
		o    Options
		want string
	}{
		{"token", Options{Token: "tok", Netrc: netrc}, "Bearer tok"},
		{"netrc host", Options{Netrc: netrc}, "Basic Y2k6czNjcmV0"},  // ci:s3cret
		{"netrc default", Options{Netrc: defOnly}, "Basic YW5vbjp4"}, // anon:x
		{"no netrc", Options{Netrc: filepath.Join(t.TempDir(), "missing")}, ""},
		{"nothing", Options{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.URL = srv.URL
			c := client(t, tc.o)
			s.auth = nil
			c.GetRecord(ctx, key, "")
			if len(s.auth) != 1 || s.auth[0] != tc.want {
				t.Errorf("Authorization = %q, want %q", s.auth, tc.want)
			}
		})
	}
	if got := NetrcFile(func(string) string { return "" }, "/home/u"); got != "/home/u/.netrc" {
		t.Errorf("NetrcFile = %q", got)
	}
	if got := NetrcFile(func(k string) string { return map[string]string{"NETRC": "/etc/n"}[k] }, "/home/u"); got != "/etc/n" {
		t.Errorf("NetrcFile with $NETRC = %q", got)
	}
}

// A writer's slot is a sha256 of the action key and the writer, so that
// servers checking /ac/ names take it; every (key, writer) pair has its
// own, and the key itself is the slot of no writer.
func TestSlot(t *testing.T) {
	k1, k2 := sum([]byte("k1")), sum([]byte("k2"))
	w1, w2 := sum([]byte("w1")), sum([]byte("w2"))
	seen := map[string]string{}
	for _, tc := range []struct{ key, writer string }{{k1, w1}, {k1, w2}, {k2, w1}, {k2, w2}} {
		s := Slot(tc.key, tc.writer)
		if len(s) != 64 || strings.Trim(s, "0123456789abcdef") != "" {
			t.Errorf("Slot(%s, %s) = %q, not 64 lowercase hex digits", tc.key[:8], tc.writer[:8], s)
		}
		if prev, ok := seen[s]; ok || s == tc.key || s == tc.writer {
			t.Errorf("Slot(%s, %s) = %s, the slot of %s too", tc.key[:8], tc.writer[:8], s, prev)
		}
		seen[s] = tc.key[:8] + "/" + tc.writer[:8]
	}
	// The layout is documented: sha256("mkrelease-action-record/v1" NUL key NUL writer).
	if want := sum([]byte("mkrelease-action-record/v1\x00" + k1 + "\x00" + w1)); Slot(k1, w1) != want {
		t.Errorf("Slot = %s, want %s", Slot(k1, w1), want)
	}
	if Slot(k1, "") != k1 {
		t.Errorf("Slot(key, \"\") = %s, want the key", Slot(k1, ""))
	}
}

// A writer never replaces a record in its slot: the client asks first
// (for servers that ignore If-None-Match, nginx among them) and sends
// If-None-Match: * (for those that hold to it, even against a record
// stored in between); only replace, a repair, writes over one.
func TestPutRecordKeepsRecord(t *testing.T) {
	ctx := context.Background()
	key, writer := sum([]byte("k")), sum([]byte("w"))
	s, srv := newStore(t)
	c := client(t, Options{URL: srv.URL})
	path := "/ac/" + Slot(key, writer)
	if stored, err := c.PutRecord(ctx, key, writer, []byte("first"), false); err != nil || !stored {
		t.Fatalf("PutRecord into an empty slot = %v, %v", stored, err)
	}
	if stored, err := c.PutRecord(ctx, key, writer, []byte("second"), false); err != nil || stored {
		t.Errorf("PutRecord over a record = %v, %v, want kept", stored, err)
	}
	if got := string(s.files[path]); got != "first" {
		t.Errorf("the slot holds %q, want the first record", got)
	}
	if stored, err := c.PutRecord(ctx, key, writer, []byte("repaired"), true); err != nil || !stored {
		t.Errorf("PutRecord with replace = %v, %v", stored, err)
	}
	if got := string(s.files[path]); got != "repaired" {
		t.Errorf("after a repair the slot holds %q", got)
	}
	// The PUT of a new record carries If-None-Match: *, and a server
	// answering 412 (a record stored between the question and the PUT)
	// keeps its record: no error, nothing stored.
	var header string
	racing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			http.NotFound(w, r)
			return
		}
		header = r.Header.Get("If-None-Match")
		w.WriteHeader(http.StatusPreconditionFailed)
	}))
	defer racing.Close()
	if stored, err := client(t, Options{URL: racing.URL}).PutRecord(ctx, key, writer, []byte("x"), false); err != nil || stored || header != "*" {
		t.Errorf("PutRecord answered 412 = %v, %v, If-None-Match %q; want kept, no error, \"*\"", stored, err, header)
	}
}
