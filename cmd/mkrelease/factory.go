package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/inert"
	"github.com/mkrelease/mkrelease/internal/progress"
)

// IOStreams are the command's standard streams.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Factory carries what every command needs; tests replace its parts.
type Factory struct {
	IO *IOStreams
	// Getenv reads the environment (tests inject their own); LookupEnv
	// also tells an unset variable from an empty one.
	Getenv    func(string) string
	LookupEnv func(string) (string, bool)
	// Progress shows long work on ErrOut; run sets it (log.go).
	Progress *progress.Meter
}

// globalOptions are the flags every verb shares.
type globalOptions struct {
	ConfigPath string
	LockPath   string
	CacheDir   string
	Verbose    bool
}

func (g *globalOptions) lockPath() string {
	if g.LockPath != "" {
		return g.LockPath
	}
	return filepath.Join(filepath.Dir(g.ConfigPath), lock.DefaultFile)
}

// relockCommand is what a user types to re-lock this configuration.
func (g *globalOptions) relockCommand() string {
	cmd := "mkrelease lock"
	if g.ConfigPath != config.DefaultFile {
		cmd += " --config " + g.ConfigPath
	}
	if g.LockPath != "" {
		cmd += " --lock " + g.LockPath
	}
	return cmd
}

func (g *globalOptions) cacheDir(f *Factory) (string, error) {
	if g.CacheDir != "" {
		return filepath.Abs(g.CacheDir)
	}
	if d := f.Getenv("MKRELEASE_CACHE"); d != "" {
		return filepath.Abs(d)
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", usageErrorf("no cache folder: %v (set MKRELEASE_CACHE or pass --cache-dir)", err)
	}
	return filepath.Join(d, "mkrelease"), nil
}

func (g *globalOptions) logger(f *Factory) *slog.Logger {
	level := slog.LevelInfo
	if g.Verbose {
		level = slog.LevelDebug
	}
	var w io.Writer = f.IO.ErrOut
	if f.Progress != nil {
		w = f.Progress.Writer() // log lines go above the status line
	}
	return slog.New(&lineHandler{mu: &sync.Mutex{}, w: w, level: level})
}

// Main runs the command line and returns the exit status. It sets the
// garbage collector's soft memory limit first (memlimit.go).
func Main() int {
	// The key's password is read from the environment once, first (on
	// Linux this may start mkrelease again without it); no process
	// mkrelease starts inherits it (secretenv.go).
	s := takeSecrets()
	applyMemoryLimit(os.LookupEnv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runInert(ctx, s, os.Stdin, os.Stdout, os.Stderr, os.Args[1:])
}

// runInert runs the command line args with the standard streams given,
// everything written to them inert (package inert): a case's id, a
// wheel's metadata or a file name that holds an escape sequence is shown
// escaped, so it cannot act on the terminal (draw a forged "published"
// over a refusal). JSON is escaped already; the progress display draws on
// stderr itself and escapes what it draws.
func runInert(ctx context.Context, s secrets, in io.Reader, stdout, stderr io.Writer, args []string) int {
	out, errOut := inert.NewWriter(stdout), inert.NewWriter(stderr)
	f := &Factory{IO: &IOStreams{In: in, Out: out, ErrOut: errOut}, Getenv: s.getenv(os.Getenv), LookupEnv: s.lookupEnv(os.LookupEnv)}
	code := run(ctx, f, args)
	out.Flush()
	errOut.Flush()
	return code
}

func run(ctx context.Context, f *Factory, args []string) int {
	if f.Progress == nil {
		f.Progress = newProgress(f)
	}
	if p := f.Getenv("MKRELEASE_CPUPROFILE"); p != "" {
		stop, err := startCPUProfile(p)
		if err != nil {
			fmt.Fprintln(f.IO.ErrOut, "mkrelease: "+err.Error())
			return 2
		}
		defer stop()
	}
	if p := f.Getenv("MKRELEASE_MEMPROFILE"); p != "" {
		defer writeAllocsProfile(p, f.IO.ErrOut)
	}
	ctx = progress.NewContext(ctx, f.Progress)
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetOut(f.IO.Out)
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	code := exitCode(err)
	var silent *silentError
	if !errors.As(err, &silent) {
		fmt.Fprintln(f.IO.ErrOut, "mkrelease: "+strings.ReplaceAll(err.Error(), "\n", "\n  "))
	}
	return code
}

// exitCode maps an error to its exit status (docs/troubleshooting.md, "Exit status"): 2 for bad invocation,
// configuration or input, 1 for everything that refused or failed.
func exitCode(err error) int {
	var coder interface{ ExitCode() int }
	if errors.As(err, &coder) {
		return coder.ExitCode()
	}
	return 1
}

// usageError is a bad invocation (exit 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) ExitCode() int { return 2 }

func usageErrorf(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// writeAllocsProfile writes the run's allocation profile (every
// allocation since the start, sampled; `go tool pprof -sample_index
// alloc_space`) to path; a failure is reported on errOut.
func writeAllocsProfile(path string, errOut io.Writer) {
	var b bytes.Buffer
	err := pprof.Lookup("allocs").WriteTo(&b, 0)
	if err == nil {
		err = atomicfile.WriteFile(path, b.Bytes(), 0o644)
	}
	if err != nil {
		fmt.Fprintln(errOut, "mkrelease: MKRELEASE_MEMPROFILE: "+err.Error())
	}
}

// silentError carries an exit status for a failure already reported.
type silentError struct{ code int }

func (e *silentError) Error() string { return fmt.Sprintf("exit %d", e.code) }
func (e *silentError) ExitCode() int { return e.code }

// startCPUProfile writes a CPU profile of the run to path (for `go tool
// pprof`), until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("MKRELEASE_CPUPROFILE: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("MKRELEASE_CPUPROFILE: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}
