package build

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
)

// TestNearestOutputs: the files a step wrote are ranked by nearness to a
// declared output it did not write: a name that extends it or that it
// extends first (nearest by length), then by edit distance of the file
// names, the missing output's own folder before others, then by path.
func TestNearestOutputs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		missing string
		written []string
		limit   int
		want    []string
	}{
		{"so-name versions", "liblz4.so",
			[]string{"include/lz4.h", "liblz4.a", "liblz4.so.1.9.4", "liblz4.so.1", "pkgconfig/liblz4.pc"}, 10,
			[]string{"liblz4.so.1", "liblz4.so.1.9.4", "liblz4.a", "pkgconfig/liblz4.pc", "include/lz4.h"}},
		{"the right name in another folder", "lib/liblz4.so",
			[]string{"lib/README", "lib/liblz4.so.1", "lib64/liblz4.so"}, 10,
			[]string{"lib64/liblz4.so", "lib/liblz4.so.1", "lib/README"}},
		{"same folder breaks a tie", "lib/x.so",
			[]string{"a/x.so.1", "lib/x.so.1", "z/x.so.1"}, 10,
			[]string{"lib/x.so.1", "a/x.so.1", "z/x.so.1"}},
		{"case folded", "LICENSE",
			[]string{"NOTICE", "license.txt", "COPYING"}, 10,
			[]string{"license.txt", "NOTICE", "COPYING"}},
		{"a shorter name it extends", "foo.so.1",
			[]string{"bar.so.1", "foo.so"}, 10,
			[]string{"foo.so", "bar.so.1"}},
		{"edit distance among unrelated names", "foo.so",
			[]string{"zzzzzzzz", "libfoo.so", "fo.so"}, 10,
			[]string{"fo.so", "libfoo.so", "zzzzzzzz"}},
		{"bounded, nearest kept", "liblz4.so",
			[]string{"a", "b", "liblz4.so.1", "c", "liblz4.so.1.9.4", "d"}, 2,
			[]string{"liblz4.so.1", "liblz4.so.1.9.4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newNearest(tc.missing, tc.limit)
			for _, w := range tc.written {
				n.add(w)
			}
			if got := n.names(); !slices.Equal(got, tc.want) {
				t.Errorf("nearest to %s = %q, want %q", tc.missing, got, tc.want)
			}
		})
	}
}

func writeFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckOutputsMissing: the error for a declared output the step did
// not write names it, the other files the step wrote nearest first (not
// its other declared outputs), and the remedy.
func TestCheckOutputsMissing(t *testing.T) {
	for _, tc := range []struct {
		name     string
		declared []string
		written  []string
		want     string
	}{
		{"one missing", []string{"liblz4.so", "lz4.h"}, []string{"lz4.h", "liblz4.a", "liblz4.so.1"},
			"declared output(s) not written to $MKRELEASE_OUT: liblz4.so; it wrote (nearest first): liblz4.so.1, liblz4.a; " +
				"declare the file(s) the step writes in its outputs, or make the step write liblz4.so"},
		{"two missing", []string{"lib/liblz4.so", "lz4.h"}, []string{"include/lz4.h", "lib/liblz4.so.1"},
			"declared output(s) not written to $MKRELEASE_OUT: lib/liblz4.so, lz4.h; it wrote 2 other files, nearest first " +
				"to lib/liblz4.so: lib/liblz4.so.1, include/lz4.h; to lz4.h: include/lz4.h, lib/liblz4.so.1; " +
				"declare the file(s) the step writes in its outputs, or make the step write lib/liblz4.so, lz4.h"},
		{"only the other declared outputs", []string{"x", "y"}, []string{"x"},
			"declared output(s) not written to $MKRELEASE_OUT: y; the step wrote nothing else there; make the step write y into $MKRELEASE_OUT"},
		{"nothing written", []string{"x"}, nil,
			"declared output(s) not written to $MKRELEASE_OUT: x; the step wrote nothing there; make the step write x into $MKRELEASE_OUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			writeFiles(t, out, tc.written...)
			err := checkOutputs(out, config.Step{Outputs: tc.declared})
			if err == nil || err.Error() != tc.want {
				t.Errorf("checkOutputs:\n got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// TestCheckOutputsManyFiles: a step that writes 2,000 files gets an
// error of bounded length for a missing output and for undeclared ones.
// (With 100,000 files the missing output's error took 0.36 s, walks and
// ranking included, on a 2-core machine.)
func TestCheckOutputsManyFiles(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 2,000 files")
	}
	out := t.TempDir()
	for d := range 5 {
		dir := filepath.Join(out, fmt.Sprintf("d%03d", d))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for f := range 400 {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("liblz4-part-%04d.o", f)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	writeFiles(t, out, "d003/liblz4.so.1")
	for _, tc := range []struct {
		name     string
		declared []string
		want     []string
	}{
		{"missing", []string{"d003/liblz4.so"}, []string{": d003/liblz4.so; it wrote (nearest first): d003/liblz4.so.1, d003/liblz4-part-0000.o, ", ", and 1991 more; "}},
		{"undeclared", []string{"d003/liblz4.so.1"}, []string{"wrote undeclared output(s): d000/liblz4-part-0000.o, ", ", and 1990 more "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			err := checkOutputs(out, config.Step{Outputs: tc.declared})
			took := time.Since(start)
			if err == nil {
				t.Fatal("checkOutputs passed")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not say %q:\n%v", w, err)
				}
			}
			if len(err.Error()) > 1000 {
				t.Errorf("error is %d bytes long", len(err.Error()))
			}
			t.Logf("%d-byte error in %v", len(err.Error()), took)
		})
	}
}
