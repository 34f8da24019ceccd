package extract

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/extract/namefold"
)

// FuzzExtract feeds arbitrary bytes as an archive (as is, gzip-compressed,
// or as a stream that cannot seek) and checks that Extract neither panics
// nor writes outside its destination, and that whatever it extracts obeys
// the rules.
func FuzzExtract(f *testing.F) {
	var raw [][]byte
	raw = append(raw, makeTar(f, validEntries()...))
	for _, c := range unsafeCases() {
		if c.zipOnly || c.name == "too long" { // keep seeds small: the fuzzer is faster
			continue
		}
		if c.rawTar != nil {
			raw = append(raw, c.rawTar)
		} else {
			raw = append(raw, makeTar(f, c.entries...))
		}
	}
	for _, r := range raw {
		f.Add(r, uint8(0), uint8(0), true)
		f.Add(r, uint8(1), uint8(1), true) // gzip-compressed by the target
	}
	f.Add(gzipBytes(f, raw[0]), uint8(2), uint8(0), true)
	f.Add(xzBytes(f, raw[0]), uint8(0), uint8(0), true)
	var zipEntries []ent
	for _, e := range validEntries() {
		if e.typ != tar.TypeXGlobalHeader && e.typ != tar.TypeLink {
			zipEntries = append(zipEntries, e)
		}
	}
	f.Add(makeZip(f, zipEntries...), uint8(0), uint8(0), true)
	f.Add(makeZip(f, zipEntries...), uint8(2), uint8(1), false)
	f.Add(makeZip(f, file("../x", "x"), symlink("l", "../..")), uint8(0), uint8(0), true)
	// Archives that other readers would read differently (see
	// ambiguous_test.go): raw tar and zip, uncompressed so that the fuzzer
	// can mutate their headers.
	for _, c := range ambiguousCases(f) {
		if strings.HasPrefix(c.name, "tar/") || strings.HasPrefix(c.name, "zip/") {
			f.Add(c.data, uint8(0), uint8(0), true)
		}
	}

	f.Fuzz(func(t *testing.T, data []byte, mode, strip uint8, symlinks bool) {
		if mode%3 == 1 {
			data = gzipBytes(t, data)
		}
		base := t.TempDir()
		parent := filepath.Join(base, "parent")
		if err := os.Mkdir(parent, 0o755); err != nil {
			t.Fatal(err)
		}
		dest := filepath.Join(parent, "out")
		var r io.Reader = bytes.NewReader(data)
		if mode%3 == 2 {
			r = streamOnly{r}
		}
		opts := Options{
			StripComponents: int(strip % 3),
			AllowSymlinks:   symlinks,
			Limits:          Limits{MaxEntries: 512, MaxFileBytes: 1 << 20, MaxTotalBytes: 4 << 20, RatioAllowance: 1 << 20},
		}
		rep, err := Extract(context.Background(), "fuzz", r, dest, opts)

		if names := entriesOf(t, base); len(names) != 1 || names[0] != "parent" {
			t.Fatalf("written outside the parent directory: %q", names)
		}
		if err != nil {
			assertNothingLeft(t, parent)
			return
		}
		if names := entriesOf(t, parent); len(names) != 1 || names[0] != "out" {
			t.Fatalf("parent holds %q after success", names)
		}
		n := 0
		folded := map[string]string{} // no two extracted paths are one name on macOS or Windows
		walkErr := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == dest {
				return nil
			}
			n++
			rel, _ := filepath.Rel(dest, p)
			if prev, ok := folded[namefold.Fold(rel)]; ok {
				t.Errorf("%q and %q were both extracted: one name ignoring case and normalisation", prev, rel)
			}
			folded[namefold.Fold(rel)] = rel
			fi, err := d.Info()
			if err != nil {
				return err
			}
			switch m := fi.Mode(); {
			case m.IsDir():
				if m.Perm() != 0o755 {
					t.Errorf("%s: directory mode %v", rel, m)
				}
			case m.IsRegular():
				if m.Perm() != 0o644 && m.Perm() != 0o755 {
					t.Errorf("%s: file mode %v", rel, m)
				}
			case m.Type() == fs.ModeSymlink:
				if !symlinks {
					t.Errorf("%s: symlink extracted although not allowed", rel)
				}
				esc, err := escapes(dest, filepath.ToSlash(rel))
				if err != nil {
					return err
				}
				if esc {
					target, _ := os.Readlink(p)
					t.Errorf("%s -> %s: symlink leads outside the destination", rel, target)
				}
			default:
				t.Errorf("%s: special file %v", rel, m)
			}
			return nil
		})
		if walkErr != nil && !errors.Is(walkErr, fs.ErrNotExist) {
			t.Fatal(walkErr)
		}
		if n != rep.Files+rep.Dirs+rep.Symlinks {
			t.Errorf("tree has %d entries, report %+v", n, rep)
		}
	})
}
