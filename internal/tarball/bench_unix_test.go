//go:build unix

package tarball

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

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
