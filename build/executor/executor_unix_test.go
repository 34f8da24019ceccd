//go:build unix

package executor

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestUmaskIsFixed: umask is a Unix notion (Windows has none to fix).
func TestUmaskIsFixed(t *testing.T) {
	old := syscall.Umask(0o077)
	defer syscall.Umask(old)
	e := New(context.Background(), Options{})
	p := paths(t)
	if _, err := e.Run(context.Background(), action("sh", "-c", "echo x > ${MKRELEASE_OUT}/f"), p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(p.Out, "f"))
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o644 {
		t.Errorf("file written with mode %v under host umask 077, want 0644", st.Mode().Perm())
	}
}
