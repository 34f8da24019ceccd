package projectfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// layout makes a project folder next to an outside one:
//
//	outside/secret              "outside secret"
//	outside/docs/README.md      "outside readme"
//	proj/README.md              "inside readme"
//	proj/docs/guide.md          "inside guide"
//
// and the links of the test case, given as project path → target.
func layout(t *testing.T, links map[string]string) (proj string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need privileges on Windows")
	}
	top := t.TempDir()
	proj = filepath.Join(top, "proj")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(top, "outside", "secret"), "outside secret")
	write(filepath.Join(top, "outside", "docs", "README.md"), "outside readme")
	write(filepath.Join(proj, "README.md"), "inside readme")
	write(filepath.Join(proj, "docs", "guide.md"), "inside guide")
	for l, target := range links {
		target = strings.ReplaceAll(target, "$TOP", top)
		p := filepath.Join(proj, filepath.FromSlash(l))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	return proj
}

// Every way a symbolic link can lead a project file outside the project is
// refused, naming the link, its target and the remedy; links that stay
// inside are followed, and regular files read as they are.
func TestReadFile(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links map[string]string
		rel   string
		want  string // the content read, or "" for a refusal
		err   string // what the refusal says
	}{
		{"regular file", nil, "README.md", "inside readme", ""},
		{"file in a folder", nil, "docs/guide.md", "inside guide", ""},
		{"relative link out", map[string]string{"NOTES.md": "../outside/secret"}, "NOTES.md", "",
			"NOTES.md is a symbolic link to ../outside/secret, outside the project: copy the file into the project in place of the link"},
		{"absolute link out", map[string]string{"NOTES.md": "$TOP/outside/secret"}, "NOTES.md", "",
			"NOTES.md is a symbolic link to $TOP/outside/secret, an absolute path"},
		{"absolute link in", map[string]string{"NOTES.md": "$TOP/proj/README.md"}, "NOTES.md", "",
			"NOTES.md is a symbolic link to $TOP/proj/README.md, an absolute path"},
		{"folder on the way", map[string]string{"ext": "../outside/docs"}, "ext/README.md", "",
			"ext/README.md: ext is a symbolic link to ../outside/docs, outside the project: replace the link ext with a real folder inside the project"},
		{"climbing out through an inner folder", map[string]string{"docs/up": "../../outside"}, "docs/up/secret", "",
			"docs/up/secret: docs/up is a symbolic link to ../../outside, outside the project"},
		{"chain leaving at its second link", map[string]string{"NOTES.md": "docs/notes", "docs/notes": "../../outside/secret"}, "NOTES.md", "",
			"NOTES.md: docs/notes is a symbolic link to ../../outside/secret, outside the project: copy the file into the project in place of the link docs/notes"},
		{"dangling link out", map[string]string{"NOTES.md": "../outside/none"}, "NOTES.md", "",
			"NOTES.md is a symbolic link to ../outside/none, outside the project"},
		{"link inside", map[string]string{"NOTES.md": "docs/guide.md"}, "NOTES.md", "inside guide", ""},
		{"folder link inside", map[string]string{"d": "docs"}, "d/guide.md", "inside guide", ""},
		{"link climbing back in", map[string]string{"docs/readme": "../README.md"}, "docs/readme", "inside readme", ""},
		{"missing", nil, "NONE.md", "", "NONE.md: no such file"},
		{"a folder", nil, "docs", "", "docs is not a regular file"},
		{"climbing path", nil, "../outside/secret", "", "is not a path inside the project"},
		{"absolute path", nil, "/etc/passwd", "", "is not a path inside the project"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := layout(t, tc.links)
			top := filepath.Dir(proj)
			data, err := ReadFile(proj, tc.rel, 1<<20)
			if tc.err == "" {
				if err != nil || string(data) != tc.want {
					t.Fatalf("ReadFile(%s) = %q, %v; want %q", tc.rel, data, err, tc.want)
				}
				return
			}
			want := strings.ReplaceAll(tc.err, "$TOP", top)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("ReadFile(%s) = %q, %v\nwant a refusal saying %q", tc.rel, data, err, want)
			}
			if strings.Contains(string(data), "outside") {
				t.Fatalf("ReadFile(%s) read the outside file: %q", tc.rel, data)
			}
			if strings.Contains(tc.err, "symbolic link") {
				var le *LinkError
				if !errors.As(err, &le) {
					t.Fatalf("ReadFile(%s) = %T, want a *LinkError", tc.rel, err)
				}
			}
			if strings.HasSuffix(tc.err, "no such file") && !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("ReadFile(%s) = %v, want fs.ErrNotExist", tc.rel, err)
			}
		})
	}
}

// A file larger than the limit is refused.
func TestReadFileLimit(t *testing.T) {
	proj := layout(t, nil)
	if _, err := ReadFile(proj, "README.md", 4); err == nil || !strings.Contains(err.Error(), "more than the 4") {
		t.Fatalf("ReadFile = %v, want the limit named", err)
	}
	if data, err := ReadFile(proj, "README.md", 13); err != nil || string(data) != "inside readme" {
		t.Fatalf("ReadFile at the limit = %q, %v", data, err)
	}
}

// A folder is handed back with its in-project links resolved, and refused
// when a link takes it outside.
func TestFolder(t *testing.T) {
	for _, tc := range []struct {
		name  string
		links map[string]string
		rel   string
		want  string // the folder returned, relative to the top, or "" for a refusal
		err   string
	}{
		{"real folder", nil, "docs", "proj/docs", ""},
		{"project itself", nil, ".", "proj", ""},
		{"link inside", map[string]string{"d": "docs"}, "d", "proj/docs", ""},
		{"link out", map[string]string{"vendor": "../outside/docs"}, "vendor", "",
			"vendor is a symbolic link to ../outside/docs, outside the project: copy the folder into the project in place of the link"},
		{"link out on the way", map[string]string{"vendor": "../outside"}, "vendor/docs", "",
			"vendor/docs: vendor is a symbolic link to ../outside, outside the project: replace the link vendor with a real folder"},
		{"absolute link", map[string]string{"vendor": "$TOP/proj/docs"}, "vendor", "", "an absolute path"},
		{"missing", nil, "none", "", "none: no such folder"},
		{"a file", nil, "README.md", "", "README.md is not a folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := layout(t, tc.links)
			top := filepath.Dir(proj)
			got, err := Folder(proj, tc.rel)
			if tc.err == "" {
				if err != nil || got != filepath.Join(top, filepath.FromSlash(tc.want)) {
					t.Fatalf("Folder(%s) = %q, %v; want %s", tc.rel, got, err, tc.want)
				}
				return
			}
			want := strings.ReplaceAll(tc.err, "$TOP", filepath.Dir(proj))
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Folder(%s) = %q, %v\nwant a refusal saying %q", tc.rel, got, err, want)
			}
		})
	}
}
