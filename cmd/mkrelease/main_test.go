package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/channeltest"
	"github.com/mkrelease/mkrelease/internal/testkey"
	"github.com/mkrelease/mkrelease/internal/testnginx"
	"github.com/mkrelease/mkrelease/provenance"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"mkrelease":   func() { os.Exit(Main()) },
		"secretprobe": secretProbe,
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
			"exits":       cmdExits,
			"listen":      cmdListen,
			"nginx":       cmdNginx,
			"signrecord":  cmdSignRecord,
			"testkey":     cmdTestKey,
			"testpublish": cmdTestPublish,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case "netns":
				return exec.Command("unshare", "-rn", "true").Run() == nil, nil
			case "nginx":
				return testnginx.Installed(), nil
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

// testkey NAME PUB writes the public key of internal/testkey's key NAME
// (PEM) to PUB.
func cmdTestKey(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: testkey NAME PUB")
	}
	pem, err := provenance.MarshalPublicKey(testkey.Signer(args[0]).Public())
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), pem, 0o644))
}

// testpublish KEY DEST PROJECT VERSION publishes a release that passes
// every check of mkrelease verify (internal/channeltest) into the channel
// at DEST, signed by internal/testkey's key KEY; the channel's current
// state must be signed by KEY too.
func cmdTestPublish(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: testpublish KEY DEST PROJECT VERSION")
	}
	res, err := channeltest.Publish(context.Background(), ts.MkAbs(args[1]),
		channel.Release{Project: args[2], Version: args[3], Signer: testkey.Signer(args[0])})
	ts.Check(err)
	ts.Logf("published %s %s: generation %d", args[2], args[3], res.GenerationNumber)
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
	p := ts.Value(nginxKey{}).(*nginxProc)
	if args[0] == "stop" {
		if p.srv == nil {
			ts.Fatalf("nginx stop: not started")
		}
		p.srv.Stop()
		return
	}
	if p.srv != nil {
		ts.Fatalf("nginx start: already started")
	}
	srv, err := testnginx.Start(ts.MkAbs("nginx"))
	ts.Check(err)
	p.srv = srv
	ts.Defer(srv.Stop)
	ts.Setenv("CACHE_URL", srv.CacheURL)
	ts.Setenv("SLOW_URL", srv.SlowURL)
	ts.Setenv("BROKEN_URL", srv.BrokenURL)
	ts.Setenv("NGINX_ROOT", srv.Root)
}

// nginxKey finds a script's nginxProc among its values.
type nginxKey struct{}

// nginxProc is a script's nginx, once started.
type nginxProc struct {
	srv *testnginx.Server
}
