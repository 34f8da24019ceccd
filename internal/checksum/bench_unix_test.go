//go:build unix

package checksum

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// BenchmarkVerifyVersusSha256sum verifies a folder of 8 files of 64 MiB
// (in the page cache) with Verify and with `sha256sum -c` in each
// iteration, and reports both times and the speedup.
func BenchmarkVerifyVersusSha256sum(b *testing.B) {
	if _, err := exec.LookPath("sha256sum"); err != nil {
		b.Skip("no sha256sum")
	}
	const n, size = 8, 64 << 20
	dir, s := benchFolder(b, n, size)
	b.SetBytes(n * size)
	var tOurs, tGNU, cOurs, cGNU time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start, cpu := time.Now(), cpuTime(b, syscall.RUSAGE_SELF)
		rep, err := Verify(context.Background(), dir, s, VerifyOptions{})
		if err != nil || !rep.OK() {
			b.Fatal(err, rep.Err())
		}
		tOurs += time.Since(start)
		cOurs += cpuTime(b, syscall.RUSAGE_SELF) - cpu

		start, cpu = time.Now(), cpuTime(b, syscall.RUSAGE_CHILDREN)
		cmd := exec.Command("sha256sum", "-c", "--quiet", "SHA256SUMS")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		tGNU += time.Since(start)
		cGNU += cpuTime(b, syscall.RUSAGE_CHILDREN) - cpu
	}
	b.StopTimer()
	b.ReportMetric(tOurs.Seconds()/float64(b.N), "mkrelease-s/op")
	b.ReportMetric(tGNU.Seconds()/float64(b.N), "sha256sum-s/op")
	b.ReportMetric(tGNU.Seconds()/tOurs.Seconds(), "speedup")
	b.ReportMetric(cOurs.Seconds()/float64(b.N), "mkrelease-cpu-s/op")
	b.ReportMetric(cGNU.Seconds()/float64(b.N), "sha256sum-cpu-s/op")
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
