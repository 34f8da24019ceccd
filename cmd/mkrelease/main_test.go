package main

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mkrelease": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the CLI behaviour specs in testdata/script.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("MKRELEASE_CACHE", filepath.Join(env.WorkDir, ".cache"))
			env.Values[nginxKey{}] = &nginxProc{}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exits":  cmdExits,
			"listen": cmdListen,
			"nginx":  cmdNginx,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "netns":
				return exec.Command("unshare", "-rn", "true").Run() == nil, nil
			case "nginx":
				_, err := os.Stat(nginxBinary)
				return err == nil, nil
			}
			return false, errors.New("unknown condition " + cond)
		},
	})
}

// exits CODE PROG ARGS... runs PROG and fails unless it exits with CODE;
// stdout and stderr are kept for the next `stdout`/`stderr` checks.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: bad code %q", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// listen starts a TCP listener on 127.0.0.1 for the rest of the script and
// puts its port in $LISTEN_PORT.
func cmdListen(ts *testscript.TestScript, neg bool, args []string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		ts.Fatalf("listen: %v", err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	ts.Defer(func() { ln.Close() })
	ts.Setenv("LISTEN_PORT", strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
}

// nginxBinary is where Debian's nginx package (scripts/bootstrap installs
// it) puts the server.
const nginxBinary = "/usr/sbin/nginx"

// nginxConf serves a WebDAV store accepting PUT (a Bazel HTTP remote cache
// as far as mkrelease is concerned) on the first port, the same store at
// one byte a second on the second, and 503 for everything on the third.
// Every file nginx writes is under the prefix: it never touches the Debian
// package's configuration, logs or service.
const nginxConf = `daemon off;
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

// nginx start|stop runs nginx (the "nginx" condition says whether it is
// installed) as a remote action cache for the rest of the script, with its
// configuration, logs, temporary files and store in $WORK/nginx; it sets
// $CACHE_URL (http://127.0.0.1:PORT/mk), $SLOW_URL (the same store, one
// byte a second), $BROKEN_URL (503 for everything) and $NGINX_ROOT (the
// store's folder: $NGINX_ROOT/mk/cas/SHA256 is a blob). stop ends it.
func cmdNginx(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 || (args[0] != "start" && args[0] != "stop") {
		ts.Fatalf("usage: nginx start|stop")
	}
	if args[0] == "stop" {
		p := ts.Value(nginxKey{}).(*nginxProc)
		if p.cmd == nil {
			ts.Fatalf("nginx stop: not started")
		}
		p.stop()
		return
	}
	p := ts.Value(nginxKey{}).(*nginxProc)
	if p.cmd != nil {
		ts.Fatalf("nginx start: already started")
	}
	prefix := ts.MkAbs("nginx")
	for _, d := range []string{"data", "tmp"} {
		ts.Check(os.MkdirAll(filepath.Join(prefix, d), 0o755))
	}
	ports := freePorts(ts, 3)
	conf := strings.NewReplacer("{{P}}", prefix, "{{CACHE}}", ports[0], "{{SLOW}}", ports[1], "{{BROKEN}}", ports[2]).Replace(nginxConf)
	ts.Check(os.WriteFile(filepath.Join(prefix, "nginx.conf"), []byte(conf), 0o644))
	cmd := exec.Command(nginxBinary, "-p", prefix, "-c", filepath.Join(prefix, "nginx.conf"), "-e", filepath.Join(prefix, "error.log"))
	cmd.Dir = prefix
	ts.Check(cmd.Start())
	p.cmd, p.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(p.done) }()
	ts.Defer(p.stop)
	for deadline := time.Now().Add(10 * time.Second); ; {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+ports[0], time.Second)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-p.done:
			log, _ := os.ReadFile(filepath.Join(prefix, "error.log"))
			ts.Fatalf("nginx exited at start:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nginx did not listen on 127.0.0.1:%s within 10s", ports[0])
		}
		time.Sleep(50 * time.Millisecond)
	}
	ts.Setenv("CACHE_URL", "http://127.0.0.1:"+ports[0]+"/mk")
	ts.Setenv("SLOW_URL", "http://127.0.0.1:"+ports[1]+"/mk")
	ts.Setenv("BROKEN_URL", "http://127.0.0.1:"+ports[2]+"/mk")
	ts.Setenv("NGINX_ROOT", filepath.Join(prefix, "data"))
}

// nginxKey finds a script's nginxProc among its values.
type nginxKey struct{}

// nginxProc is a script's nginx, once started.
type nginxProc struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *nginxProc) stop() {
	if p.cmd == nil {
		return
	}
	select {
	case <-p.done:
		return
	default:
	}
	p.cmd.Process.Kill()
	<-p.done
}

// freePorts returns n ports of 127.0.0.1 that were free a moment ago.
func freePorts(ts *testscript.TestScript, n int) []string {
	var lns []net.Listener
	var ports []string
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		ts.Check(err)
		lns = append(lns, ln)
		ports = append(ports, fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}
