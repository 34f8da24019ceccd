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

	for _, tc := range []struct {
		name string
		src  config.Source
		want string
	}{
		{"archive", config.Source{Name: "vendor", Archive: "http://" + addr + "/up.tar.gz", SHA256: strings.Repeat("a", 64)},
			"source vendor: download http://" + addr + "/up.tar.gz: could not connect within 300ms"},
		// git has no connect timeout of its own: mkrelease connects first.
		{"git over http", config.Source{Name: "up", Git: "http://" + addr + "/up.git", Commit: strings.Repeat("a", 40)},
			"source up: fetch http://" + addr + "/up.git: could not connect to " + addr + " within 300ms"},
		{"git protocol", config.Source{Name: "up", Git: "git://" + addr + "/up.git", Commit: strings.Repeat("a", 40)},
			"source up: fetch git://" + addr + "/up.git: could not connect to " + addr + " within 300ms"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"} {
				t.Setenv(k, "")
			}
			f := &Fetcher{CacheDir: t.TempDir(), ConnectTimeout: 300 * time.Millisecond, IdleTimeout: 5 * time.Second}
			start := time.Now()
			_, err := f.Materialize(context.Background(), tc.src, filepath.Join(t.TempDir(), "ws"), Expected{})
			var se *Error
			if !errors.As(err, &se) || !strings.HasPrefix(err.Error(), tc.want+"\n\thint: ") {
				t.Fatalf("Materialize = %v, want a connect timeout: %s", err, tc.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}
