//go:build unix

package runner

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/evidence"
)

// TestCasesFileMustBeRegular: a lane that puts a link to a file it cannot
// read, or a FIFO, in place of its cases file gets an ERROR case, and
// mkrelease, which reads the file outside the sandbox, neither reads the
// link's target nor waits on the FIFO. The control: the same file, not
// through a link, is read.
func TestCasesFileMustBeRegular(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "dev.key")
	secret := `{"id": "PRIVATE-KEY-MATERIAL", "status": "PASS", "duration_s": 0}` + "\n"
	if err := os.WriteFile(target, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, file string
		wantCase   string // the ID of the one case read
	}{
		{"a link", link, "L/cases-file"},
		{"a FIFO", fifo, "L/cases-file"},
		{"control: the file itself", target, "PRIVATE-KEY-MATERIAL"},
	} {
		t.Run(c.name, func(t *testing.T) {
			done := make(chan []evidence.Case, 1)
			go func() {
				cases, bad := readCases("L", c.file)
				countLines(c.file)
				done <- append(cases, bad...)
			}()
			var got []evidence.Case
			select {
			case got = <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("reading the cases file waits")
			}
			if len(got) != 1 || got[0].ID != c.wantCase {
				t.Fatalf("read %+v, want one case %s", got, c.wantCase)
			}
			if c.file != target && (got[0].Status != evidence.StatusError || strings.Contains(got[0].Message, "PRIVATE")) {
				t.Errorf("case %+v: want an ERROR that holds nothing of the target", got[0])
			}
		})
	}
	if n := countLines(link); n != 0 {
		t.Errorf("countLines followed the link: %d lines", n)
	}
}
