package deps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pyname"
)

// Media types of the simple repository API.
const (
	mediaJSON   = "application/vnd.pypi.simple.v1+json"
	mediaHTMLv1 = "application/vnd.pypi.simple.v1+html"
	// acceptSimple asks for PEP 691 JSON first and PEP 503 HTML after.
	acceptSimple = mediaJSON + ", " + mediaHTMLv1 + ";q=0.2, text/html;q=0.01"
	// maxIndexPage bounds a project page read into memory.
	maxIndexPage = 64 << 20
)

// indexFile is one file a project page lists.
type indexFile struct {
	name     string // file name (last component of the URL path)
	url      string // absolute URL, fragment removed
	sha256   string // advertised digest ("" when none): a hint only
	yanked   string // "" not yanked; else the reason, or "yanked"
	metaHint string // advertised sha256 of the core metadata file, or "true"
}

// projectPage is the outcome of reading one project page.
type projectPage struct {
	url   string // the page's URL, for messages
	files []indexFile
	found bool // false: the index has no such project (404, no folder)
}

// indexPage reads the project page of name from the Finder's index: over
// HTTP(S) with content negotiation (PEP 691 JSON preferred, PEP 503 HTML
// accepted), or from a file:// tree as NAME/index.html.
func (f *Finder) indexPage(ctx context.Context, name string) (projectPage, error) {
	base := f.Index
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	pageURL := base + pyname.Normalize(name) + "/"
	u, err := url.Parse(pageURL)
	if err != nil {
		return projectPage{}, &FetchError{Location: pageURL, Err: err}
	}
	page := projectPage{url: pageURL}
	switch u.Scheme {
	case "file":
		dir := filepath.FromSlash(u.Path)
		data, err := os.ReadFile(filepath.Join(dir, "index.html"))
		if errors.Is(err, fs.ErrNotExist) {
			return page, nil
		}
		if err != nil {
			return page, &FetchError{Location: pageURL, Err: err}
		}
		page.found = true
		page.files, err = parseSimpleHTML(u, data)
		if err != nil {
			return page, &FetchError{Location: pageURL, Err: err}
		}
		return page, nil
	case "http", "https":
		if f.Offline {
			return page, &FetchError{Location: pageURL, Err: errors.New("offline: the index is not consulted")}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
		if err != nil {
			return page, &FetchError{Location: pageURL, Err: err}
		}
		req.Header.Set("Accept", acceptSimple)
		resp, err := f.client().Do(req)
		if err != nil {
			return page, &FetchError{Location: pageURL, Err: err}
		}
		defer resp.Body.Close()
		if resp.StatusCode == http.StatusNotFound {
			return page, nil
		}
		if resp.StatusCode != http.StatusOK {
			return page, &FetchError{Location: pageURL, Err: fmt.Errorf("HTTP status %s", resp.Status)}
		}
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxIndexPage+1))
		if err != nil {
			return page, &FetchError{Location: pageURL, Err: err}
		}
		if len(data) > maxIndexPage {
			return page, &FetchError{Location: pageURL, Err: fmt.Errorf("project page larger than %d bytes", maxIndexPage)}
		}
		page.found = true
		final := resp.Request.URL
		media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
		switch media {
		case mediaJSON:
			page.files, err = parseSimpleJSON(final, name, data)
		case mediaHTMLv1, "text/html", "":
			page.files, err = parseSimpleHTML(final, data)
		default:
			err = fmt.Errorf("unexpected content type %q (want %s or text/html)", media, mediaJSON)
		}
		if err != nil {
			return page, &FetchError{Location: pageURL, Err: err}
		}
		return page, nil
	}
	return page, &FetchError{Location: pageURL, Err: fmt.Errorf("index URL scheme %q: want http, https or file", u.Scheme)}
}

// simpleJSON is a PEP 691 project page.
type simpleJSON struct {
	Meta struct {
		APIVersion string `json:"api-version"`
	} `json:"meta"`
	Name  string `json:"name"`
	Files []struct {
		Filename         string            `json:"filename"`
		URL              string            `json:"url"`
		Hashes           map[string]string `json:"hashes"`
		CoreMetadata     json.RawMessage   `json:"core-metadata"`
		DistInfoMetadata json.RawMessage   `json:"dist-info-metadata"`
		Yanked           json.RawMessage   `json:"yanked"`
	} `json:"files"`
}

// parseSimpleJSON reads a PEP 691 project page served at page.
func parseSimpleJSON(page *url.URL, project string, data []byte) ([]indexFile, error) {
	var doc simpleJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("PEP 691 project page: %w", err)
	}
	major, _, _ := strings.Cut(doc.Meta.APIVersion, ".")
	if major != "1" {
		return nil, fmt.Errorf("PEP 691 project page: api-version %q is not 1.x", doc.Meta.APIVersion)
	}
	if pyname.Normalize(doc.Name) != pyname.Normalize(project) {
		return nil, fmt.Errorf("PEP 691 project page: name %q, expected %q", doc.Name, project)
	}
	var out []indexFile
	for _, jf := range doc.Files {
		u, err := page.Parse(jf.URL)
		if err != nil || !allowedLink(page, u) {
			continue
		}
		u.Fragment, u.RawFragment = "", ""
		f := indexFile{name: jf.Filename, url: u.String()}
		if d := jf.Hashes["sha256"]; isHexDigest(d) {
			f.sha256 = strings.ToLower(d)
		}
		meta := jf.CoreMetadata
		if len(meta) == 0 {
			meta = jf.DistInfoMetadata
		}
		f.metaHint = jsonMetadataHint(meta)
		f.yanked = jsonYanked(jf.Yanked)
		if f.name == "" || strings.ContainsAny(f.name, `/\`) {
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

func jsonMetadataHint(raw json.RawMessage) string {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return "true"
		}
		return ""
	}
	var hashes map[string]string
	if json.Unmarshal(raw, &hashes) == nil {
		if d := hashes["sha256"]; isHexDigest(d) {
			return strings.ToLower(d)
		}
		return "true"
	}
	return ""
}

func jsonYanked(raw json.RawMessage) string {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return "yanked"
		}
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return "yanked"
		}
		return s
	}
	return ""
}

// allowedLink reports whether a file link on page may be followed: HTTP(S)
// links from an HTTP(S) page, file links from a file page only (a remote
// index must not point at local files).
func allowedLink(page, link *url.URL) bool {
	switch link.Scheme {
	case "http", "https":
		return true
	case "file":
		return page.Scheme == "file"
	}
	return false
}

// parseSimpleHTML reads a PEP 503 project page served at page: every
// <a href> is a file, named by the last component of its URL path; a
// "#sha256=" fragment, data-yanked and data-core-metadata (or the older
// data-dist-info-metadata) are read; a <base href> is honoured. The parser
// is tolerant (no HTML library): it scans for tags and attributes, and
// decodes character references.
func parseSimpleHTML(page *url.URL, data []byte) ([]indexFile, error) {
	s := string(data)
	base := page
	var out []indexFile
	for i := 0; i < len(s); {
		lt := strings.IndexByte(s[i:], '<')
		if lt < 0 {
			break
		}
		i += lt + 1
		tag, attrs, end := scanTag(s, i)
		i = end
		switch tag {
		case "base":
			if h, ok := attrs["href"]; ok {
				if u, err := page.Parse(h); err == nil {
					base = u
				}
			}
		case "a":
			h, ok := attrs["href"]
			if !ok {
				continue
			}
			u, err := base.Parse(strings.TrimSpace(h))
			if err != nil || !allowedLink(page, u) {
				continue
			}
			f := indexFile{}
			if frag := u.Fragment; frag != "" {
				if alg, d, ok := strings.Cut(frag, "="); ok && alg == "sha256" && isHexDigest(d) {
					f.sha256 = strings.ToLower(d)
				}
			}
			u.Fragment, u.RawFragment = "", ""
			f.url = u.String()
			f.name = path.Base(u.Path)
			if f.name == "" || f.name == "/" || f.name == "." {
				continue
			}
			meta, ok := attrs["data-core-metadata"]
			if !ok {
				meta, ok = attrs["data-dist-info-metadata"]
			}
			if ok {
				f.metaHint = "true"
				if alg, d, found := strings.Cut(meta, "="); found && alg == "sha256" && isHexDigest(d) {
					f.metaHint = strings.ToLower(d)
				}
			}
			if y, ok := attrs["data-yanked"]; ok {
				f.yanked = y
				if y == "" {
					f.yanked = "yanked"
				}
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// scanTag reads the tag starting at s[i] (just after "<"): its lower-case
// name and attributes (values unescaped). It returns the index after the
// tag's ">" (or the end of s).
func scanTag(s string, i int) (string, map[string]string, int) {
	j := i
	for j < len(s) && isTagNameChar(s[j]) {
		j++
	}
	name := strings.ToLower(s[i:j])
	attrs := map[string]string{}
	if name == "" {
		return "", attrs, j
	}
	for j < len(s) {
		for j < len(s) && isHTMLSpace(s[j]) {
			j++
		}
		if j >= len(s) {
			break
		}
		if s[j] == '>' {
			return name, attrs, j + 1
		}
		if s[j] == '/' {
			j++
			continue
		}
		k := j
		for k < len(s) && !isHTMLSpace(s[k]) && s[k] != '=' && s[k] != '>' && s[k] != '/' {
			k++
		}
		attr := strings.ToLower(s[j:k])
		j = k
		for j < len(s) && isHTMLSpace(s[j]) {
			j++
		}
		value := ""
		if j < len(s) && s[j] == '=' {
			j++
			for j < len(s) && isHTMLSpace(s[j]) {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				q := s[j]
				end := strings.IndexByte(s[j+1:], q)
				if end < 0 {
					value, j = s[j+1:], len(s)
				} else {
					value, j = s[j+1:j+1+end], j+1+end+1
				}
			} else {
				k := j
				for k < len(s) && !isHTMLSpace(s[k]) && s[k] != '>' {
					k++
				}
				value, j = s[j:k], k
			}
		}
		if attr == "" {
			j++
			continue
		}
		if _, dup := attrs[attr]; !dup {
			attrs[attr] = html.UnescapeString(value)
		}
	}
	return name, attrs, j
}

func isTagNameChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}
