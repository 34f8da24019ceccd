package deps

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// checkLocked checks the invariants of every package a reader returns.
func checkLocked(t *testing.T, lock *Lock) {
	t.Helper()
	for _, p := range lock.Packages {
		if pyname.Valid(p.Name) != nil || pyname.Normalize(p.Name) != p.Name {
			t.Fatalf("name %q is not a normalised valid name", p.Name)
		}
		v, err := pep440.Parse(p.Version)
		if err != nil || v.String() != p.Version {
			t.Fatalf("version %q is not normalised", p.Version)
		}
		if p.Source == "" && len(p.Wheels) == 0 && p.Sdist == nil {
			t.Fatalf("%s has nothing to install", p.Name)
		}
		for _, w := range p.Wheels {
			if !isHexDigest(w.SHA256) || strings.ToLower(w.SHA256) != w.SHA256 {
				t.Fatalf("%s: digest %q", p.Name, w.SHA256)
			}
			if w.Name != "" {
				fn, err := wheel.ParseFilename(w.Name)
				if err != nil || belongs(fn.Distribution, fn.Version, p) != nil {
					t.Fatalf("%s: wheel %q does not belong", p.Name, w.Name)
				}
			}
		}
		if p.Marker != nil {
			if _, err := pep508ParseMarker(p.Marker.String()); err != nil {
				t.Fatalf("%s: marker %q does not reparse: %v", p.Name, p.Marker, err)
			}
		}
	}
}

func FuzzParseRequirements(f *testing.F) {
	for _, tt := range requirementsTests {
		f.Add(tt.doc)
	}
	f.Add("a==1 ; python_version < '3' \\\n --hash=sha256:" + h1 + " # c\n--find-links x\n")
	f.Fuzz(func(t *testing.T, doc string) {
		lock, err := ParseRequirements("fuzz.txt", []byte(doc))
		if err != nil {
			var le *LockError
			if !errors.As(err, &le) || le.File != "fuzz.txt" {
				t.Fatalf("error %v (%T) is not a *LockError naming the file", err, err)
			}
			if le.Line < 1 || le.Line > strings.Count(doc, "\n")+1 {
				t.Fatalf("error names line %d of a %d-line file: %v", le.Line, strings.Count(doc, "\n")+1, err)
			}
			return
		}
		checkLocked(t, lock)
		// What was read prints back into an equivalent file.
		var b strings.Builder
		for _, p := range lock.Packages {
			b.WriteString(p.Name + "==" + p.Version)
			if p.Marker != nil {
				b.WriteString(" ; " + p.Marker.String())
			}
			for _, h := range p.Hashes() {
				b.WriteString(" --hash=sha256:" + h)
			}
			b.WriteString("\n")
		}
		again, err := ParseRequirements("again.txt", []byte(b.String()))
		if err != nil {
			t.Fatalf("reprinted lock does not parse: %v\n%s", err, b.String())
		}
		if len(again.Packages) != len(lock.Packages) {
			t.Fatalf("reprinted lock has %d packages, not %d", len(again.Packages), len(lock.Packages))
		}
		for i := range again.Packages {
			if describeLocked(again.Packages[i]) != describeLocked(lock.Packages[i]) {
				t.Fatalf("reprinted %s, was %s", describeLocked(again.Packages[i]), describeLocked(lock.Packages[i]))
			}
		}
	})
}

func FuzzParsePylock(f *testing.F) {
	for _, tt := range pylockTests {
		f.Add(tt.doc)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		lock, err := ParsePylock("/fuzz/pylock.toml", []byte(doc))
		if err != nil {
			var le *LockError
			if !errors.As(err, &le) || le.File != "/fuzz/pylock.toml" {
				t.Fatalf("error %v (%T) is not a *LockError naming the file", err, err)
			}
			if le.Line < 0 || le.Line > strings.Count(doc, "\n")+1 {
				t.Fatalf("error names line %d: %v", le.Line, err)
			}
			return
		}
		checkLocked(t, lock)
		for _, p := range lock.Packages {
			for _, w := range p.Wheels {
				if w.Name == "" || w.URL == "" && w.Path == "" {
					t.Fatalf("%s: wheel %+v without name or location", p.Name, w)
				}
			}
		}
	})
}

func FuzzParseSimpleHTML(f *testing.F) {
	f.Add(`<a href="x-1.0-py3-none-any.whl#sha256=` + h1 + `" data-yanked>x</a>`)
	f.Add(`<base href=/files/><A HREF='a.whl' data-core-metadata="sha256=` + h2 + `">`)
	f.Add(`<a href="file:///etc/x.whl">`)
	page, _ := url.Parse("https://example.invalid/simple/x/")
	f.Fuzz(func(t *testing.T, doc string) {
		files, err := parseSimpleHTML(page, []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		for _, fl := range files {
			u, err := url.Parse(fl.url)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Fragment != "" {
				t.Fatalf("file %+v: URL not an http(s) URL without fragment", fl)
			}
			if fl.sha256 != "" && !isHexDigest(fl.sha256) {
				t.Fatalf("file %+v: bad digest", fl)
			}
			if strings.ContainsAny(fl.name, "/") || fl.name == "" {
				t.Fatalf("file %+v: bad name", fl)
			}
		}
	})
}
