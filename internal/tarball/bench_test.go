package tarball

import (
	"bytes"
	"compress/flate"
	"context"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// benchTree builds a bundle-like tree under dir/root: already-compressed
// "wheels" (deflated ELF), native libraries (ELF) and Go source text. It
// returns the entries describing it and its size.
func benchTree(b *testing.B, dir string) ([]Entry, int64) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	elf, err := os.ReadFile(exe)
	if err != nil {
		b.Fatal(err)
	}
	root := filepath.Join(dir, "root")
	rng := rand.New(rand.NewPCG(7, 8))
	var entries []Entry
	var total int64
	add := func(rel string, data []byte, mode fs.FileMode) {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644|mode); err != nil {
			b.Fatal(err)
		}
		entries = append(entries, Entry{Path: rel, File: p, Mode: 0o644 | mode})
		total += int64(len(data))
	}
	variant := func() []byte {
		v := bytes.Clone(elf)
		for i := 0; i < 4096 && i < len(v); i++ {
			v[len(v)/2+i] = byte(rng.Uint32())
		}
		return v
	}
	for i := range 12 {
		var z bytes.Buffer
		fw, _ := flate.NewWriter(&z, 6)
		fw.Write(variant())
		fw.Close()
		add("wheels/pkg"+string(rune('a'+i))+"-1.0-py3-none-manylinux_2_34_x86_64.whl", z.Bytes(), 0)
	}
	for i := range 5 {
		add("lib/libnative"+string(rune('a'+i))+".so", variant(), 0o111)
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		src := filepath.Join(strings.TrimSpace(string(out)), "src", "net")
		filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil
			}
			rel, _ := filepath.Rel(src, p)
			add("src/"+filepath.ToSlash(rel), data, 0)
			return nil
		})
	}
	return entries, total
}

// BenchmarkWrite measures WriteFile (fsync and rename included) on the
// same tree.
func BenchmarkWrite(b *testing.B) {
	dir := b.TempDir()
	entries, total := benchTree(b, dir)
	out := filepath.Join(dir, "out.tar.gz")
	b.SetBytes(total)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := WriteFile(context.Background(), out, entries, Options{Root: "root"}); err != nil {
			b.Fatal(err)
		}
	}
}
