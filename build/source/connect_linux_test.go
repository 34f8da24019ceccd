package source

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
)

// TestConnectTimeout connects to a listener whose accept queue is full (a
// backlog of 0, filled by one connection that is never accepted): the
// kernel drops further SYNs, so connecting hangs until the timeout.
func TestConnectTimeout(t *testing.T) {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Listen(fd, 0); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(sa.(*syscall.SockaddrInet4).Port))
	fill, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer fill.Close()
	if probe, err := net.DialTimeout("tcp", addr, 200*time.Millisecond); err == nil {
		probe.Close()
		t.Skip("this kernel completes connections beyond the listen backlog; no way to make a connect hang here")
	}

	f := &Fetcher{CacheDir: t.TempDir(), ConnectTimeout: 300 * time.Millisecond, IdleTimeout: 5 * time.Second}
	s := config.Source{Name: "vendor", Archive: "http://" + addr + "/up.tar.gz", SHA256: strings.Repeat("a", 64)}
	start := time.Now()
	_, err = f.Materialize(context.Background(), s, filepath.Join(t.TempDir(), "ws"), Expected{})
	var se *Error
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "source vendor: download http://"+addr+"/up.tar.gz: could not connect within 300ms") {
		t.Fatalf("Materialize = %v, want a connect timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %v", d)
	}
}
