package deps

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// testIndex is a simple repository served by httptest on 127.0.0.1.
type testIndex struct {
	srv      *httptest.Server
	files    map[string]string // file name → path of the bytes served
	tamper   map[string]bool   // file names served with other bytes
	mode     string            // "html": HTML only; "json": PEP 691 when asked
	requests atomic.Int64
	jsonHits atomic.Int64
	mu       sync.Mutex
	accepts  []string
	// metaHash and yanked, when set for a file, are advertised in HTML.
	metaHash map[string]string
	yanked   map[string]string
}

func newTestIndex(t *testing.T, mode string, files map[string]string) *testIndex {
	ix := &testIndex{files: map[string]string{}, tamper: map[string]bool{}, mode: mode}
	for _, p := range files {
		ix.files[filepath.Base(p)] = p
	}
	ix.srv = httptest.NewServer(http.HandlerFunc(ix.serve))
	t.Cleanup(ix.srv.Close)
	return ix
}

func (ix *testIndex) url() string { return ix.srv.URL + "/simple/" }

// projectFiles lists the files of project, sorted.
func (ix *testIndex) projectFiles(project string) []string {
	var out []string
	for _, name := range mapKeys(ix.files) {
		dist, _, _ := strings.Cut(name, "-")
		if pyname.Normalize(dist) == project {
			out = append(out, name)
		}
	}
	return out
}

func (ix *testIndex) serve(w http.ResponseWriter, r *http.Request) {
	ix.requests.Add(1)
	switch {
	case strings.HasPrefix(r.URL.Path, "/simple/"):
		ix.mu.Lock()
		ix.accepts = append(ix.accepts, r.Header.Get("Accept"))
		ix.mu.Unlock()
		project := strings.Trim(strings.TrimPrefix(r.URL.Path, "/simple/"), "/")
		if project != pyname.Normalize(project) {
			http.Redirect(w, r, "/simple/"+pyname.Normalize(project)+"/", http.StatusMovedPermanently)
			return
		}
		names := ix.projectFiles(project)
		if len(names) == 0 {
			http.NotFound(w, r)
			return
		}
		if ix.mode == "json" && strings.Contains(r.Header.Get("Accept"), mediaJSON) {
			ix.jsonHits.Add(1)
			type jf struct {
				Filename     string            `json:"filename"`
				URL          string            `json:"url"`
				Hashes       map[string]string `json:"hashes"`
				CoreMetadata any               `json:"core-metadata,omitempty"`
				Yanked       any               `json:"yanked,omitempty"`
			}
			doc := map[string]any{"meta": map[string]string{"api-version": "1.1"}, "name": project}
			var files []jf
			for _, n := range names {
				files = append(files, jf{Filename: n, URL: "../../files/" + n, Hashes: map[string]string{"sha256": ix.digest(n)}, CoreMetadata: true})
			}
			doc["files"] = files
			w.Header().Set("Content-Type", mediaJSON)
			json.NewEncoder(w).Encode(doc)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		page := simpleHTML(project, names, ix.digest)
		for n, h := range ix.metaHash {
			page = strings.Replace(page, `data-core-metadata="true">`+n, `data-core-metadata="sha256=`+h+`">`+n, 1)
		}
		for n, y := range ix.yanked {
			page = strings.Replace(page, `>`+n+`</a>`, ` data-yanked="`+html.EscapeString(y)+`">`+n+`</a>`, 1)
		}
		fmt.Fprint(w, page)
	case strings.HasPrefix(r.URL.Path, "/files/"):
		name := strings.TrimPrefix(r.URL.Path, "/files/")
		p, ok := ix.files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		data, _ := os.ReadFile(p)
		if ix.tamper[name] {
			data = append([]byte("tampered"), data...)
		}
		w.Write(data)
	default:
		http.NotFound(w, r)
	}
}

// digest is the sha256 an index advertises: that of the real bytes.
func (ix *testIndex) digest(name string) string {
	return sha256Hex(ix.files[name])
}

func sha256Hex(p string) string {
	data, err := os.ReadFile(p)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", sha256Sum(data))
}

// simpleHTML renders a PEP 503 project page linking ../../files/NAME.
func simpleHTML(project string, names []string, digest func(string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\" content=\"1.1\">\n    <title>Links for %s</title>\n  </head>\n  <body>\n    <h1>Links for %s</h1>\n", project, project)
	for _, n := range names {
		fmt.Fprintf(&b, "    <a href=\"../../files/%s#sha256=%s\" data-requires-python=\"%s\" data-core-metadata=\"true\">%s</a><br />\n",
			url.PathEscape(n), digest(n), html.EscapeString(">=3.7"), html.EscapeString(n))
	}
	b.WriteString("  </body>\n</html>\n")
	return b.String()
}

func fixtureIndexFiles(fx *fixture) map[string]string {
	files := map[string]string{}
	for k, v := range fx.files {
		files[k] = v
	}
	return files
}

func TestResolveHTMLIndex(t *testing.T) {
	fx := newFixture(t)
	ix := newTestIndex(t, "html", fixtureIndexFiles(fx))
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{Index: ix.url(), CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureClosure(t, fx, c)
	for _, p := range c.Packages {
		if want := ix.srv.URL + "/files/" + p.Files[0].Name; p.Files[0].URL != want {
			t.Errorf("%s: URL %q, want %q", p.Name, p.Files[0].URL, want)
		}
	}
	for _, a := range ix.accepts {
		if !strings.HasPrefix(a, mediaJSON) || !strings.Contains(a, "text/html") {
			t.Errorf("Accept %q: want PEP 691 JSON first, HTML after", a)
		}
	}
}

func TestIndexHintsAreFindings(t *testing.T) {
	fx := newFixture(t)
	ix := newTestIndex(t, "html", fixtureIndexFiles(fx))
	ex := filepath.Base(fx.files["example"])
	ix.metaHash = map[string]string{ex: strings.Repeat("e", 64)}
	ix.yanked = map[string]string{ex: "bad <release>"}
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{Index: ix.url(), CacheDir: filepath.Join(fx.dir, "cache")}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, fd := range c.Findings {
		if fd.Package == "example" {
			kinds[fd.Kind] = true
			t.Log(fd)
		}
	}
	if !kinds["metadata-hint"] || !kinds["yanked"] {
		t.Errorf("findings %v", c.Findings)
	}
	if c.Packages[0].Files[0].Yanked != "bad <release>" {
		t.Errorf("file %+v", c.Packages[0].Files[0])
	}
}

func TestResolveJSONIndexAndCache(t *testing.T) {
	fx := newFixture(t)
	ix := newTestIndex(t, "json", fixtureIndexFiles(fx))
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{Index: ix.url(), CacheDir: filepath.Join(fx.dir, "cache")}
	first, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureClosure(t, fx, first)
	if ix.jsonHits.Load() == 0 {
		t.Fatal("the JSON index was never asked for PEP 691 JSON")
	}
	// A second resolution is answered by the cache: no HTTP at all, and
	// the same result.
	before := ix.requests.Load()
	second, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	if n := ix.requests.Load() - before; n != 0 {
		t.Errorf("second resolve made %d HTTP requests, want 0", n)
	}
	if string(RequirementsTxt(first)) != string(RequirementsTxt(second)) || string(PylockToml(first, nil)) != string(PylockToml(second, nil)) {
		t.Error("the cached resolution differs from the first")
	}
	for i := range first.Packages {
		if first.Packages[i].Files[0].URL != second.Packages[i].Files[0].URL {
			t.Errorf("%s: URL %q then %q", first.Packages[i].Name, first.Packages[i].Files[0].URL, second.Packages[i].Files[0].URL)
		}
	}
	// The cache is keyed by digest.
	for _, p := range first.Packages {
		want := filepath.Join(fx.dir, "cache", "sha256", p.Files[0].SHA256, p.Files[0].Name)
		if p.Files[0].Path != want {
			t.Errorf("%s cached at %s, want %s", p.Name, p.Files[0].Path, want)
		}
	}
	// A damaged cache entry is not used: it is fetched again.
	ex := first.Packages[0]
	os.WriteFile(ex.Files[0].Path, []byte("rotten"), 0o644)
	third, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	if sha256File(t, third.Packages[0].Files[0].Path) != ex.Files[0].SHA256 {
		t.Error("a damaged cache entry was served")
	}
}

func TestResolveFileIndex(t *testing.T) {
	fx := newFixture(t)
	root := filepath.Join(fx.dir, "repo")
	byProject := map[string][]string{}
	digests := map[string]string{}
	for project, p := range fx.files {
		copyFile(t, p, filepath.Join(root, "files"), "")
		byProject[project] = append(byProject[project], filepath.Base(p))
		digests[filepath.Base(p)] = sha256File(t, p)
	}
	for project, names := range byProject {
		dir := filepath.Join(root, "simple", project)
		os.MkdirAll(dir, 0o755)
		page := simpleHTML(project, names, func(n string) string { return digests[n] })
		if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{Index: (&url.URL{Scheme: "file", Path: filepath.ToSlash(filepath.Join(root, "simple")) + "/"}).String(), CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	checkFixtureClosure(t, fx, c)
	for _, p := range c.Packages {
		if p.Files[0].URL != "" {
			t.Errorf("%s: a local file got URL %q", p.Name, p.Files[0].URL)
		}
	}
}

func TestRefuseHashMismatchDownload(t *testing.T) {
	for _, mode := range []string{"html", "json"} {
		t.Run(mode, func(t *testing.T) {
			fx := newFixture(t)
			ix := newTestIndex(t, mode, fixtureIndexFiles(fx))
			ix.tamper[filepath.Base(fx.files["example"])] = true
			lock := mustReadRequirements(t, fx.requirements(t, nil))
			cache := filepath.Join(fx.dir, "cache")
			f := &Finder{Index: ix.url(), CacheDir: cache}
			r := refusal(t, fx.roots, lock, f, targetLinux, KindHashMismatch)
			var hm *HashMismatchError
			if !errors.As(r, &hm) || !strings.HasPrefix(hm.Location, ix.srv.URL) || r.Package != "example" {
				t.Errorf("refusal %+v", r)
			}
			if _, err := os.Stat(filepath.Join(cache, "sha256", hm.Got)); err == nil {
				t.Error("tampered bytes were cached")
			}
			entries, _ := os.ReadDir(filepath.Join(cache, "tmp"))
			if len(entries) != 0 {
				t.Errorf("temporary files left in the cache: %v", entries)
			}
		})
	}
}

func TestIndexHintSkipsUnpinnedFile(t *testing.T) {
	// An index file whose advertised sha256 is not pinned is not even
	// downloaded; the pinned one is.
	fx := newFixture(t)
	files := fixtureIndexFiles(fx)
	other := buildWheel(t, filepath.Join(fx.dir, "other"), wheelSpec{name: "example", version: "21.12", tag: "cp311-abi3-manylinux_2_17_x86_64"})
	files["example-abi3"] = other
	ix := newTestIndex(t, "json", files)
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	var fetched []string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		fetched = append(fetched, r.URL.Path)
		return http.DefaultTransport.RoundTrip(r)
	})}
	f := &Finder{Index: ix.url(), CacheDir: filepath.Join(fx.dir, "cache"), HTTP: client}
	c, err := Resolve(context.Background(), fx.roots, lock, f, targetLinux)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range fetched {
		if strings.Contains(p, "abi3") {
			t.Errorf("fetched %s, whose advertised digest is not pinned", p)
		}
	}
	if c.Packages[0].Files[0].Name != "example-21.12-py3-none-any.whl" {
		t.Errorf("chose %s", c.Packages[0].Files[0].Name)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestOfflineRefusesNetwork(t *testing.T) {
	fx := newFixture(t)
	ix := newTestIndex(t, "json", fixtureIndexFiles(fx))
	lock := mustReadRequirements(t, fx.requirements(t, nil))
	f := &Finder{Index: ix.url(), CacheDir: filepath.Join(fx.dir, "cache"), Offline: true}
	refusal(t, fx.roots, lock, f, targetLinux, KindFetch)
	if ix.requests.Load() != 0 {
		t.Errorf("%d requests while offline", ix.requests.Load())
	}
}

func TestParseSimpleHTML(t *testing.T) {
	page, _ := url.Parse("https://example.invalid/simple/demo/")
	d := strings.Repeat("ab", 32)
	doc := `<html><head><base href="https://files.example.invalid/pkgs/"></head><body>
<A HREF='demo-1.0-py3-none-any.whl#sha256=` + d + `' data-core-metadata="sha256=` + strings.Repeat("cd", 32) + `">demo-1.0-py3-none-any.whl</A>
<a href="demo-0.9-py3-none-any.whl#md5=00" data-yanked="broken &amp; bad" data-dist-info-metadata=true>x</a>
<a href=file:///etc/passwd>passwd</a>
<a href="demo-1.0.tar.gz">demo-1.0.tar.gz</a>
<a>no href</a>`
	files, err := parseSimpleHTML(page, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Fatalf("files %+v", files)
	}
	want := indexFile{name: "demo-1.0-py3-none-any.whl", url: "https://files.example.invalid/pkgs/demo-1.0-py3-none-any.whl", sha256: d, metaHint: strings.Repeat("cd", 32)}
	if files[0] != want {
		t.Errorf("got %+v\nwant %+v", files[0], want)
	}
	if files[1].yanked != "broken & bad" || files[1].sha256 != "" || files[1].metaHint != "true" {
		t.Errorf("got %+v", files[1])
	}
	if _, err := wheel.ParseFilename(files[2].name); err == nil {
		t.Errorf("sdist parsed as a wheel: %+v", files[2])
	}
}

func TestParseSimpleJSONRejects(t *testing.T) {
	page, _ := url.Parse("https://example.invalid/simple/demo/")
	for _, doc := range []string{
		`{"meta": {"api-version": "2.0"}, "name": "demo", "files": []}`,
		`{"meta": {"api-version": "1.0"}, "name": "other", "files": []}`,
		`not json`,
	} {
		if _, err := parseSimpleJSON(page, "demo", []byte(doc)); err == nil {
			t.Errorf("parseSimpleJSON(%s) succeeded", doc)
		}
	}
}
