// Package executor runs build actions hermetically.
//
// An action sees only the environment the executor composes: a fixed
// allowlist (PATH from the host so toolchains are found, and nothing else
// from it unless release.toml passes it through), HOME and TMPDIR inside a
// private scratch folder, TZ=UTC, LC_ALL=LANG=C.UTF-8, SOURCE_DATE_EPOCH,
// Go settings that make builds offline, path-independent and free of VCS
// stamps (GOFLAGS=-trimpath -buildvcs=false -mod=readonly, GOPROXY=off,
// GOTOOLCHAIN=local, GOENV=off, GOWORK=off, GOTELEMETRY=off), and prefix
// maps that turn the workspace path into "." in C compilers' output
// (-ffile-prefix-map and -gno-record-gcc-switches appended to the CFLAGS
// and CXXFLAGS release.toml gives, and no other flag; cgo gets no per-run
// path at all, -trimpath maps its paths). It runs with umask 022, in
// its own process group (killed as a whole on cancel or timeout).
//
// On Linux every action runs in a bubblewrap sandbox (see [Sandbox]): its
// own user, mount, PID, IPC, UTS and network namespaces, a file system view
// of the system folders and the declared toolchains read-only and of its
// workspace, output, scratch and declared caches writable, and nothing else:
// not the project folder, the action cache, keys, the user's home, other
// processes or host sockets. Where the kernel or the host refuses, the
// executor falls back to a network namespace alone, or to nothing, and
// [Executor.Sandbox] says so and why: the build records it and the release
// policies refuse such a release unless the configuration allows it.
// On macOS steps run under sandbox-exec with a profile that denies them
// the network (level "network": the file system and other processes stay
// visible); on Windows they run with no isolation at all (level "none").
//
// Paths that differ between runs (the workspace, the output and scratch
// folders) appear in the environment only through placeholders until the
// moment of execution, so [Action.Key] does not depend on them.
package executor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Placeholders stand for per-run paths in Env and Argv.
const (
	WorkspacePlaceholder = "@WORKSPACE@"
	OutPlaceholder       = "@OUT@"
	ScratchPlaceholder   = "@SCRATCH@"
	// CachePlaceholder is the step's own persistent cache folder
	// ([Action.Cache]), which $MKRELEASE_STEP_CACHE names.
	CachePlaceholder = "@CACHE@"
)

// KeySchema versions the action key: bump it whenever the executor changes
// what an action may produce from the same inputs.
//
// v2: actions run sandboxed, and the isolation level is part of the key, so
// an output made outside the sandbox is never served to a sandboxed build;
// the step and target are too, since an entry serves only its own step.
// v3: a sandboxed step sees its folders at fixed places (/mkrelease/src,
// …) and a /tmp of its own, so a step that records where it ran makes
// other bytes than under v2.
const KeySchema = "mkrelease-action-v3"

// Action is one command to run for one target.
type Action struct {
	Step   string // step name, for messages
	Target string // target name, for messages
	// Argv is the command; ${VAR} is expanded from Env at run time.
	Argv []string
	// Env is the complete environment, possibly with placeholders.
	Env map[string]string
	// Dir is the working folder relative to the workspace.
	Dir string
	// Outputs are the files the action must write below $MKRELEASE_OUT.
	Outputs []string
	// Inputs are the digests of everything else the action depends on
	// (source tree hash, toolchain versions and executable digests, ...), by
	// name.
	Inputs map[string]string
	// Timeout bounds the run (0: 30 minutes).
	Timeout time.Duration
	// Tools are the commands of the locked toolchains (names looked up on
	// the action's PATH, or paths): the sandbox shows their installation
	// folders read-only. They are not part of the key (their identities are,
	// through Inputs).
	Tools []string
	// Caches are persistent folders the action may write (a GOCACHE), bound
	// writable into the sandbox. Not part of the key.
	Caches []string
	// Cache is the step's own persistent folder for the caches of the
	// tools it runs (zig's, ccache's), given to it as $MKRELEASE_STEP_CACHE
	// and bound writable like Caches; empty, it is a folder of the run's
	// scratch, new at every run. Not part of the key (the environment
	// names it by [CachePlaceholder]).
	Cache string
	// Isolation is the [Sandbox.Level] the action runs under; it is part of
	// the key.
	Isolation string
	// Stdout, when set, also receives the command's standard output alone
	// ([Result.Log] has both streams): a toolchain's version line. Not part
	// of the key.
	Stdout io.Writer
}

// Key is the sha256 of everything that determines the action's outputs.
func (a Action) Key() string {
	type keyDoc struct {
		Schema  string            `json:"schema"`
		Step    string            `json:"step"`
		Target  string            `json:"target"`
		Argv    []string          `json:"argv"`
		Env     map[string]string `json:"env"`
		Dir     string            `json:"dir"`
		Outputs []string          `json:"outputs"`
		Inputs  map[string]string `json:"inputs"`
		Sandbox string            `json:"sandbox"`
	}
	// encoding/json sorts map keys, so the document is canonical.
	key, err := checksum.JSON(keyDoc{KeySchema, a.Step, a.Target, a.Argv, KeyEnv(a.Env), a.Dir, a.Outputs, a.Inputs, a.Isolation})
	if err != nil {
		panic(err) // only strings: cannot fail
	}
	return key
}

// SourcePlaceholder stands for the workspace of a further source a step
// uses.
func SourcePlaceholder(name string) string { return "@SOURCE:" + name + "@" }

// SourceEnv is the variable that gives a step the folder of source name:
// MKRELEASE_SOURCE_ and the name in upper case, other characters as _.
func SourceEnv(name string) string {
	b := []byte(strings.ToUpper(name))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	return "MKRELEASE_SOURCE_" + string(b)
}

// Paths are the real folders behind the placeholders for one run.
type Paths struct {
	Workspace string // the source workspace (read as input)
	Out       string // empty folder the action writes its outputs into
	Scratch   string // empty private folder for HOME, TMPDIR, ...
	// Sources are the workspaces of further sources the step uses, by name.
	Sources map[string]string
}

// Result describes a finished run.
type Result struct {
	Duration time.Duration
	// Log is the combined stdout and stderr.
	Log []byte
}

// StepError is a failed action: it names the step and target and carries
// the tail of its output. It maps to exit status 1.
type StepError struct {
	Step, Target string
	Reason       string
	Tail         string
	// Isolated says the step ran without network; Sandboxed that it ran
	// in the sandbox (for the hints).
	Isolated  bool
	Sandboxed bool
	Err       error
}

// Error names the step, says why it failed and shows the end of its output.
func (e *StepError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "step %s [%s]: %s", e.Step, e.Target, e.Reason)
	if e.Err != nil {
		b.WriteString(": " + e.Err.Error())
	}
	if e.Tail != "" {
		b.WriteString("\n--- last lines of its output ---\n" + strings.TrimRight(e.Tail, "\n") + "\n---")
	}
	if e.Isolated && looksLikeNetwork(e.Tail) {
		b.WriteString("\n\thint: build steps run without network (a network namespace); vendor or pin what the step downloads as a [[source]]")
	}
	if e.Sandboxed && looksLikeMissingFile(e.Tail) {
		b.WriteString("\n\thint: a build step sees only the system folders (/usr, /etc's essentials), the [[toolchain]]s of release.toml, its workspace, $MKRELEASE_OUT and its scratch HOME/TMPDIR; declare a tool the step runs as a [[toolchain]] to make its folder visible")
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *StepError) Unwrap() error { return e.Err }

// ExitCode is 1.
func (e *StepError) ExitCode() int { return 1 }

func looksLikeNetwork(s string) bool {
	s = strings.ToLower(s)
	for _, w := range []string{"network is unreachable", "connection refused", "could not resolve", "name resolution", "no such host", "dial tcp", "dial udp"} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func looksLikeMissingFile(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "not found") || strings.Contains(s, "no such file or directory")
}

// Run executes a with the given paths. The caller checks outputs.
func (e *Executor) Run(ctx context.Context, a Action, p Paths) (Result, error) {
	timeout := a.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// The step's cache folder is its own persistent one, bound writable
	// with the other caches, or else a folder of its scratch.
	scratch := []string{filepath.Join(p.Scratch, "home"), filepath.Join(p.Scratch, "tmp")}
	cache := a.Cache
	if cache == "" {
		cache = filepath.Join(p.Scratch, "cache")
		scratch = append(scratch, cache)
	}
	for _, d := range scratch {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return Result{}, fmt.Errorf("prepare scratch folder: %w", err)
		}
	}
	for _, c := range append(slices.Clone(a.Caches), cache) {
		if err := os.MkdirAll(c, 0o755); err != nil {
			return Result{}, fmt.Errorf("prepare cache folder: %w", err)
		}
	}
	// The step's folders as the step sees them: in the sandbox, at fixed
	// places (see [insideView]); elsewhere, where they are.
	v := view{host: p, inside: p, cache: cache, insideCache: cache, caches: a.Caches, insideCaches: a.Caches}
	if e.sandbox.Isolated {
		v = insideView(p, cache, a.Caches)
	}
	paths := v.replacer()
	env := make(map[string]string, len(a.Env))
	for k, v := range a.Env {
		env[k] = paths.Replace(v)
	}
	if e.sandbox.Isolated && a.Env["TMPDIR"] == ScratchPlaceholder+"/tmp" {
		env["TMPDIR"] = "/tmp" // the same folder, the step's own /tmp
	}
	argv := make([]string, len(a.Argv))
	for i, arg := range a.Argv {
		argv[i] = Expand(paths.Replace(arg), env)
	}
	dir := filepath.Join(v.inside.Workspace, filepath.FromSlash(a.Dir))
	// umask is per process: set it in a tiny shell that then becomes the
	// command, so mkrelease's own umask is never changed.
	inner := append([]string{"/bin/sh", "-c", `umask 022 && exec "$@"`, "mkrelease-step"}, argv...)
	cmd, err := e.command(a, v, env, dir, inner)
	if err != nil {
		return Result{}, &StepError{Step: a.Step, Target: a.Target, Reason: "could not prepare its sandbox", Err: err}
	}
	cmd.Env = envList(env)
	var log lockedBuffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if a.Stdout != nil {
		cmd.Stdout = io.MultiWriter(&log, a.Stdout)
	}

	// The step's processes die with mkrelease (a parent-death signal, which
	// the kernel ties to the thread that started them: keep this goroutine
	// on that thread until the step has ended).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, &StepError{Step: a.Step, Target: a.Target, Reason: "could not start", Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// Kill the whole process group: compilers spawn children (in the
		// sandbox, the PID namespace ends with them).
		killGroup(cmd)
		<-done
		err = ctx.Err()
	}
	res := Result{Duration: time.Since(start), Log: log.Bytes()}
	if err != nil {
		reason := "failed"
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			reason = fmt.Sprintf("timed out after %s (raise `timeout` of the step if this is expected)", timeout)
		case errors.Is(err, context.Canceled):
			reason = "cancelled"
		}
		return res, &StepError{Step: a.Step, Target: a.Target, Reason: reason, Tail: Tail(res.Log, 30),
			Isolated: e.sandbox.Network, Sandboxed: e.sandbox.Isolated, Err: err}
	}
	return res, nil
}

// Expand replaces each ${NAME} in s whose NAME is set in env with its value.
// Everything else, "$NAME" and unknown names included, is left as written,
// so shell snippets in argv keep their own variables.
func Expand(s string, env map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], '}')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+2 : i+j]
		if v, ok := env[name]; ok {
			b.WriteString(s[:i] + v)
		} else {
			b.WriteString(s[:i+j+1])
		}
		s = s[i+j+1:]
	}
}

// view is where a run's folders are on the host and where the step sees
// them (the same places, but in the sandbox).
type view struct {
	host, inside       Paths
	cache, insideCache string // the step's cache folder (Action.Cache, or one of its scratch)
	// caches are Action.Caches, and insideCaches where the step sees each.
	caches, insideCaches []string
}

// Where a sandboxed step sees its own folders: at fixed places below
// insideRoot, the same on every host whatever the cache folder, and none
// below /tmp, which is the step's own (its scratch's tmp folder).
const insideRoot = "/mkrelease"

// insideView is the view of a sandboxed step: its workspace at
// /mkrelease/src, its output at /mkrelease/out, its scratch at
// /mkrelease/scratch, each further source at /mkrelease/sources/NAME, its
// cache folder at /mkrelease/cache and the other caches at
// /mkrelease/caches/N.
func insideView(p Paths, cache string, caches []string) view {
	v := view{host: p, cache: cache, caches: caches, insideCache: insideRoot + "/cache"}
	v.inside = Paths{Workspace: insideRoot + "/src", Out: insideRoot + "/out", Scratch: insideRoot + "/scratch"}
	if len(p.Sources) > 0 {
		v.inside.Sources = make(map[string]string, len(p.Sources))
		for _, name := range slices.Sorted(maps.Keys(p.Sources)) {
			// Source names are config names ([a-z0-9._-]); anything else
			// gets a numbered folder rather than a path of its own making.
			elem := name
			if elem == "" || elem == "." || elem == ".." || strings.ContainsAny(elem, `/\`) {
				elem = fmt.Sprintf("source-%d", len(v.inside.Sources))
			}
			v.inside.Sources[name] = insideRoot + "/sources/" + elem
		}
	}
	for i := range caches {
		v.insideCaches = append(v.insideCaches, fmt.Sprintf("%s/caches/%d", insideRoot, i))
	}
	return v
}

// replacer replaces the placeholders with the run's folders as the step
// sees them, and the caches' host paths (a GOCACHE names its folder) with
// where the step sees them.
func (v view) replacer() *strings.Replacer {
	p := v.inside
	pairs := []string{WorkspacePlaceholder, p.Workspace, OutPlaceholder, p.Out, ScratchPlaceholder, p.Scratch, CachePlaceholder, v.insideCache}
	for name, dir := range p.Sources {
		pairs = append(pairs, SourcePlaceholder(name), dir)
	}
	for i, c := range v.caches {
		if c != v.insideCaches[i] {
			pairs = append(pairs, c, v.insideCaches[i])
		}
	}
	return strings.NewReplacer(pairs...)
}

func envList(env map[string]string) []string {
	list := make([]string, 0, len(env))
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	sort.Strings(list)
	return list
}

// Tail returns the last n lines of log.
func Tail(log []byte, n int) string {
	lines := bytes.Split(bytes.TrimRight(log, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// lockedBuffer collects a step's output with bounded memory: the first
// MiB and the last MiB are kept, with a marker where bytes were dropped.
type lockedBuffer struct {
	mu      sync.Mutex
	head    bytes.Buffer
	tail    []byte
	dropped int64
}

const logKeep = 1 << 20

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := logKeep - b.head.Len(); room > 0 {
		k := min(room, len(p))
		b.head.Write(p[:k])
		p = p[k:]
	}
	b.tail = append(b.tail, p...)
	if len(b.tail) > 2*logKeep {
		cut := len(b.tail) - logKeep
		b.dropped += int64(cut)
		b.tail = append(b.tail[:0], b.tail[cut:]...)
	}
	return n, nil
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]byte(nil), b.head.Bytes()...)
	if b.dropped > 0 {
		out = append(out, fmt.Sprintf("\n[... %d bytes of output dropped ...]\n", b.dropped)...)
	}
	return append(out, b.tail...)
}

var _ io.Writer = (*lockedBuffer)(nil)
