//go:build mkrelease_testhooks

package testhook

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestCount(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, tc := range []struct {
		name  string
		calls [][2]string // point, key
		want  []string    // lines, without the newline
	}{
		{"absolute key", [][2]string{{CountHash, filepath.Join(dir, "a.whl")}}, []string{"hash\t" + filepath.Join(dir, "a.whl")}},
		{"relative key made absolute", [][2]string{{CountExtract, "b.tar.gz"}}, []string{"extract\t" + filepath.Join(dir, "b.tar.gz")}},
		{"key cleaned", [][2]string{{CountCopy, filepath.Join(dir, "x", "..", "c")}}, []string{"copy\t" + filepath.Join(dir, "c")}},
		{"appends in order", [][2]string{{CountHash, "p1"}, {CountHash, filepath.Join(dir, "p1")}, {CountCopy, "p2"}},
			[]string{"hash\t" + filepath.Join(dir, "p1"), "hash\t" + filepath.Join(dir, "p1"), "copy\t" + filepath.Join(dir, "p2")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "count")
			t.Setenv("MKRELEASE_TEST_COUNT", file)
			for _, c := range tc.calls {
				Count(c[0], c[1])
			}
			if got := readLines(t, file); !slices.Equal(got, tc.want) {
				t.Errorf("lines %q, want %q", got, tc.want)
			}
			fi, err := os.Stat(file)
			if err != nil || fi.Mode().Perm()&^0o022 != 0o644&^0o022 {
				t.Errorf("count file: %v, %v; want mode 0644 (less the umask)", fi, err)
			}
		})
	}
}

// TestCountOff: with MKRELEASE_TEST_COUNT empty nothing is written, and a
// file that cannot be opened is ignored.
func TestCountOff(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("MKRELEASE_TEST_COUNT", "")
	Count(CountHash, "x")
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("Count without MKRELEASE_TEST_COUNT wrote %v", names)
	}
	t.Setenv("MKRELEASE_TEST_COUNT", filepath.Join(dir, "no", "such", "folder", "count"))
	Count(CountHash, "x") // must not panic or fail
}

// TestCountConcurrent: lines from many goroutines arrive whole.
func TestCountConcurrent(t *testing.T) {
	file := filepath.Join(t.TempDir(), "count")
	t.Setenv("MKRELEASE_TEST_COUNT", file)
	const n, per = 16, 50
	key := filepath.Join(t.TempDir(), strings.Repeat("k", 200))
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for range per {
				Count(CountHash, key)
			}
		})
	}
	wg.Wait()
	lines := readLines(t, file)
	if len(lines) != n*per {
		t.Fatalf("%d lines, want %d", len(lines), n*per)
	}
	for i, l := range lines {
		if l != "hash\t"+key {
			t.Fatalf("line %d is %q: lines interleaved", i+1, l)
		}
	}
}

// readLines returns the lines of file, each without its newline; the file
// must end with one.
func readLines(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") {
		t.Fatalf("%s does not end with a newline: %q", file, s)
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
