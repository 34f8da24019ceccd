// Package testnginx runs Debian's nginx as a Bazel HTTP remote cache (a
// WebDAV store that accepts PUT) for tests: started on 127.0.0.1 with its
// configuration, logs, temporary files and store under a folder of the
// test's, never touching the package's configuration, logs or service.
package testnginx

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Binary is where Debian's nginx package (scripts/bootstrap installs it)
// puts the server.
const Binary = "/usr/sbin/nginx"

// Installed reports whether nginx is there.
func Installed() bool {
	_, err := os.Stat(Binary)
	return err == nil
}

// conf serves the store accepting PUT on the first port, the same store
// at one byte a second on the second, and 503 for everything on the
// third.
const conf = `daemon off;
master_process off;
worker_processes 1;
pid {{P}}/nginx.pid;
error_log {{P}}/error.log info;
events { worker_connections 64; }
http {
	access_log {{P}}/access.log;
	client_body_temp_path {{P}}/tmp/body;
	proxy_temp_path {{P}}/tmp/proxy;
	fastcgi_temp_path {{P}}/tmp/fastcgi;
	uwsgi_temp_path {{P}}/tmp/uwsgi;
	scgi_temp_path {{P}}/tmp/scgi;
	client_max_body_size 0;
	server {
		listen 127.0.0.1:{{CACHE}};
		root {{P}}/data;
		location / {
			dav_methods PUT;
			create_full_put_path on;
			dav_access user:rw group:r all:r;
		}
	}
	server {
		listen 127.0.0.1:{{SLOW}};
		root {{P}}/data;
		limit_rate 1;
	}
	server {
		listen 127.0.0.1:{{BROKEN}};
		return 503;
	}
}
`

// Server is a running nginx.
type Server struct {
	// CacheURL is the remote cache (http://127.0.0.1:PORT/mk); SlowURL the
	// same store at one byte a second; BrokenURL answers 503.
	CacheURL, SlowURL, BrokenURL string
	// Root is the store's folder: Root/mk/cas/SHA256 is a blob.
	Root string

	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs nginx with everything it writes under prefix (created).
func Start(prefix string) (*Server, error) {
	for _, d := range []string{"data", "tmp"} {
		if err := os.MkdirAll(filepath.Join(prefix, d), 0o755); err != nil {
			return nil, err
		}
	}
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	c := strings.NewReplacer("{{P}}", prefix, "{{CACHE}}", ports[0], "{{SLOW}}", ports[1], "{{BROKEN}}", ports[2]).Replace(conf)
	if err := os.WriteFile(filepath.Join(prefix, "nginx.conf"), []byte(c), 0o644); err != nil {
		return nil, err
	}
	cmd := exec.Command(Binary, "-p", prefix, "-c", filepath.Join(prefix, "nginx.conf"), "-e", filepath.Join(prefix, "error.log"))
	cmd.Dir = prefix
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &Server{cmd: cmd, done: make(chan struct{}), Root: filepath.Join(prefix, "data"),
		CacheURL: "http://127.0.0.1:" + ports[0] + "/mk", SlowURL: "http://127.0.0.1:" + ports[1] + "/mk", BrokenURL: "http://127.0.0.1:" + ports[2] + "/mk"}
	go func() { cmd.Wait(); close(s.done) }()
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+ports[0], time.Second)
		if err == nil {
			c.Close()
			return s, nil
		}
		select {
		case <-s.done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			return nil, fmt.Errorf("nginx exited at start:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, errors.New("nginx did not listen on 127.0.0.1:" + ports[0] + " within 10s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends nginx; it does nothing when it has ended.
func (s *Server) Stop() {
	select {
	case <-s.done:
		return
	default:
	}
	s.cmd.Process.Kill()
	<-s.done
}

// freePorts returns n ports of 127.0.0.1 that were free a moment ago.
func freePorts(n int) ([]string, error) {
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	var ports []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	}
	return ports, nil
}
