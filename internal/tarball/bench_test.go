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
	"syscall"
	"testing"
	"time"
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

// BenchmarkVersusGNU writes the same tree with Write and with
// `tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner | gzip -n`
// in each iteration, both to a plain file, and reports both times, the
// speedup and the size ratio (ours / GNU).
func BenchmarkVersusGNU(b *testing.B) {
	for _, tool := range []string{"tar", "gzip", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			b.Skipf("no %s", tool)
		}
	}
	dir := b.TempDir()
	entries, total := benchTree(b, dir)
	ours := filepath.Join(dir, "ours.tar.gz")
	gnu := filepath.Join(dir, "gnu.tar.gz")
	script := `tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cf - -C "$1" root | gzip -n > "$2"`
	b.SetBytes(total)
	var tOurs, tGNU, cOurs, cGNU time.Duration
	var sOurs, sGNU int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// Write to a plain file, as the shell pipeline does: WriteFile's
		// fsync would be measured for one side only.
		start, cpu := time.Now(), cpuTime(b, syscall.RUSAGE_SELF)
		f, err := os.Create(ours)
		if err != nil {
			b.Fatal(err)
		}
		_, n, err := Write(context.Background(), f, entries, Options{Root: "root"})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
		tOurs += time.Since(start)
		cOurs += cpuTime(b, syscall.RUSAGE_SELF) - cpu
		sOurs = n

		start, cpu = time.Now(), cpuTime(b, syscall.RUSAGE_CHILDREN)
		if out, err := exec.Command("sh", "-c", script, "sh", dir, gnu).CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		tGNU += time.Since(start)
		cGNU += cpuTime(b, syscall.RUSAGE_CHILDREN) - cpu
		st, err := os.Stat(gnu)
		if err != nil {
			b.Fatal(err)
		}
		sGNU = st.Size()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(tOurs.Seconds()/n, "mkrelease-s/op")
	b.ReportMetric(tGNU.Seconds()/n, "gnu-s/op")
	b.ReportMetric(tGNU.Seconds()/tOurs.Seconds(), "speedup")
	b.ReportMetric(float64(sOurs)/float64(sGNU), "size-ratio")
	b.ReportMetric(cOurs.Seconds()/n, "mkrelease-cpu-s/op")
	b.ReportMetric(cGNU.Seconds()/n, "gnu-cpu-s/op")
	b.ReportMetric(float64(total)/(1<<20), "input-MiB")
}

// cpuTime returns the user+system CPU time of who (this process, or its
// waited-for children).
func cpuTime(b *testing.B, who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
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
