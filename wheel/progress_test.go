package wheel

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/progress"
)

// TestWriteReportsProgress: with a meter in the context, a wheel's
// compression is a task of the members' bytes, counted as they are read,
// and it ends when the wheel is written.
func TestWriteReportsProgress(t *testing.T) {
	c := sampleContents(t)
	members, err := c.ordered()
	if err != nil {
		t.Fatal(err)
	}
	total := totalSize(members)
	if total < 300<<10 {
		t.Fatalf("sample contents hold %d bytes", total)
	}
	// A clock a second further on at every reading: every update draws.
	now := time.Unix(1793491200, 0)
	tick := func() time.Time { now = now.Add(time.Second); return now }
	var b strings.Builder
	m := progress.New(&b, progress.Options{Live: true, Now: tick, Width: func() int { return 400 }})
	if _, err := Write(progress.NewContext(context.Background(), m), c, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	name := "wheel " + c.Name.String()
	mib := fmt.Sprintf("%.1f", float64(total)/(1<<20))
	if !strings.Contains(out, name+" 0.0 of "+mib+" MiB") {
		t.Errorf("no status line at the start for %s of %s MiB:\n%q", name, mib, out)
	}
	if !strings.Contains(out, name+" "+mib+" of "+mib+" MiB") {
		t.Errorf("the status line never reached %s of %s MiB:\n%q", mib, mib, out)
	}
	if !strings.HasSuffix(out, "\r\x1b[K") {
		t.Errorf("the status line is not cleared once the wheel is written:\n%q", out)
	}
}
