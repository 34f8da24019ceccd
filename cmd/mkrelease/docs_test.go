package main

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func docsRoot() *cobra.Command {
	return NewCmdRoot(&Factory{IO: &IOStreams{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, Getenv: func(string) string { return "" }})
}

// generatedFiles reads the generator's files in dir (README.md and
// mkrelease*.md), by name.
func generatedFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if generatedPage(e.Name()) {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = b
		}
	}
	return files
}

// TestDocsReferenceUpToDate: the command reference checked in under
// docs/reference is what the commands' help generates now, byte for byte.
func TestDocsReferenceUpToDate(t *testing.T) {
	fresh := t.TempDir()
	if _, _, err := writeReference(docsRoot(), fresh); err != nil {
		t.Fatal(err)
	}
	want, got := generatedFiles(t, fresh), generatedFiles(t, filepath.Join("..", "..", "docs", "reference"))
	var stale []string
	for _, name := range slices.Sorted(maps.Keys(want)) {
		switch b, ok := got[name]; {
		case !ok:
			stale = append(stale, name+" (missing)")
		case !bytes.Equal(b, want[name]):
			stale = append(stale, name+" (differs)")
		}
	}
	for _, name := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[name]; !ok {
			stale = append(stale, name+" (no such command)")
		}
	}
	if len(stale) > 0 {
		t.Errorf("docs/reference is stale: %s; run `%s`", strings.Join(stale, ", "), referenceRegenerate)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)]*)\)`)

// TestDocsReferencePages: a page per command a user can run (not the
// hidden docs command, not help), every command in the index, every link
// between the pages a relative one to a page that exists, no date, and
// the same pages whatever the machine's home, cache and working folders.
func TestDocsReferencePages(t *testing.T) {
	pages, err := referencePages(docsRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"README.md", "mkrelease.md", "mkrelease_build.md", "mkrelease_evidence_run.md", "mkrelease_completion_bash.md"} {
		if _, ok := pages[name]; !ok {
			t.Errorf("no page %s", name)
		}
	}
	for _, name := range []string{"mkrelease_docs.md", "mkrelease_help.md"} {
		if _, ok := pages[name]; ok {
			t.Errorf("a page %s", name)
		}
	}
	index := string(pages[referenceIndex])
	for name, page := range pages {
		if name != referenceIndex && !strings.Contains(index, "]("+name+")") {
			t.Errorf("the index does not link to %s", name)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(page), -1) {
			if _, ok := pages[m[1]]; !ok && m[1] != "../README.md" {
				t.Errorf("%s links to %q, no page of the reference", name, m[1])
			}
		}
		if bytes.Contains(page, []byte("Auto generated")) {
			t.Errorf("%s holds cobra's dated footer", name)
		}
	}

	// Another machine: other home, cache, temporary and working folders.
	other := t.TempDir()
	for _, v := range []string{"HOME", "XDG_CACHE_HOME", "MKRELEASE_CACHE", "TMPDIR"} {
		t.Setenv(v, filepath.Join(other, v))
	}
	t.Chdir(other)
	again, err := referencePages(docsRoot())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range slices.Sorted(maps.Keys(pages)) {
		if !bytes.Equal(pages[name], again[name]) {
			t.Errorf("%s depends on the machine", name)
		}
		if bytes.Contains(again[name], []byte(other)) {
			t.Errorf("%s holds the folder %s", name, other)
		}
	}
	if len(again) != len(pages) {
		t.Errorf("%d pages, then %d", len(pages), len(again))
	}
}

// TestWriteReference: writeReference writes a changed page, leaves an
// unchanged one alone, removes a page of a command that no longer exists,
// and keeps every other file of the folder.
func TestWriteReference(t *testing.T) {
	dir := t.TempDir()
	written, removed, err := writeReference(docsRoot(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(written) < 10 || len(removed) != 0 {
		t.Fatalf("first run wrote %q, removed %q", written, removed)
	}
	for name, content := range map[string]string{
		"mkrelease_build.md":   "stale\n",
		"mkrelease_retired.md": "a command that is gone\n",
		"notes.md":             "not the generator's\n",
		"mkrelease.txt":        "not the generator's\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	written, removed, err = writeReference(docsRoot(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(written, []string{"mkrelease_build.md"}) || !slices.Equal(removed, []string{"mkrelease_retired.md"}) {
		t.Errorf("wrote %q, removed %q; want the build page written and the retired one removed", written, removed)
	}
	for _, name := range []string{"notes.md", "mkrelease.txt"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("a file not the generator's: %v", err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mkrelease_build.md")); !bytes.Contains(b, []byte("## mkrelease build")) {
		t.Errorf("the build page was not rewritten:\n%s", b)
	}
	written, removed, err = writeReference(docsRoot(), dir)
	if err != nil || len(written)+len(removed) != 0 {
		t.Errorf("an up-to-date folder: wrote %q, removed %q, %v", written, removed, err)
	}
}

func TestFenced(t *testing.T) {
	for in, want := range map[string]string{
		"plain\n":       "```text\nplain\n```",
		"a ``` b":       "````text\na ``` b\n````",
		"`x` and ``y``": "```text\n`x` and ``y``\n```",
	} {
		if got := fenced(in); got != want {
			t.Errorf("fenced(%q) = %q, want %q", in, got, want)
		}
	}
}
