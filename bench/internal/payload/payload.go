// Package payload builds the benchmarks' payload: real ELF files copied
// from the machine's library folders.
package payload

import (
	"crypto/sha256"
	"debug/elf"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Roots are the folders searched, in order.
var Roots = []string{"/usr/lib/x86_64-linux-gnu", "/usr/local/go/pkg/tool", "/usr/local/go/bin", "/usr/lib/gcc", "/usr/libexec", "/usr/lib/jvm", "/usr/bin", "/root/.pyenv/versions", "/root/go/bin"}

// Copy copies regular ELF files of at least 64 KiB from Roots into dir
// (flattened names, in path order, deduplicated by content) until limit
// bytes, keeping only files accept allows (nil: all). When the machine has
// fewer such bytes than limit (a 2 GiB payload), it adds further copies of
// the files it found, each with a short trailer naming the copy so that
// no two files are alike (an ELF reader ignores bytes past its sections),
// until limit. It returns the bytes and files copied.
func Copy(dir string, limit int64, accept func(path string) bool) (int64, int, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, 0, err
	}
	var total int64
	n := 0
	seen := map[[32]byte]bool{}
	type file struct {
		name string
		perm fs.FileMode
	}
	var found []file
	for _, root := range Roots {
		if total >= limit {
			break
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || total >= limit {
				if d != nil && d.IsDir() && err == nil {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil || info.Size() < 64<<10 {
				return nil
			}
			f, err := elf.Open(p)
			if err != nil {
				return nil
			}
			f.Close()
			if accept != nil && !accept(p) {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			sum := sha256.Sum256(data)
			if seen[sum] {
				return nil
			}
			seen[sum] = true
			name := strings.ReplaceAll(strings.TrimPrefix(p, "/"), "/", "__")
			perm := info.Mode().Perm() | 0o600
			if err := os.WriteFile(filepath.Join(dir, name), data, perm); err != nil {
				return err
			}
			found = append(found, file{name, perm})
			total += int64(len(data))
			n++
			return nil
		})
		if err != nil {
			return total, n, err
		}
	}
	if total < limit && n == 0 {
		return total, n, fmt.Errorf("found no ELF files of at least 64 KiB under %s", strings.Join(Roots, ", "))
	}
	for copyNo := 2; total < limit; copyNo++ {
		for _, f := range found {
			if total >= limit {
				break
			}
			data, err := os.ReadFile(filepath.Join(dir, f.name))
			if err != nil {
				return total, n, err
			}
			data = fmt.Appendf(data, "\x00mkrelease benchmark payload, copy %d\n", copyNo)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("copy%d__%s", copyNo, f.name)), data, f.perm); err != nil {
				return total, n, err
			}
			total += int64(len(data))
			n++
		}
	}
	return total, n, nil
}
