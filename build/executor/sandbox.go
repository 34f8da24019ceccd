package executor

import (
	"os/exec"
	"strings"

	"github.com/mkrelease/mkrelease/internal/procgroup"
)

// Isolation levels, as [Sandbox.Level] reports them and action keys record.
const (
	// LevelSandbox: every namespace and the restricted file system view.
	LevelSandbox = "sandbox"
	// LevelNetwork: a network namespace alone (the fallback).
	LevelNetwork = "network"
	// LevelNone: no isolation at all.
	LevelNone = "none"
)

// Sandbox says how build steps are isolated from the host.
type Sandbox struct {
	// Isolated is true when every step runs in the sandbox: its own user,
	// mount, PID, IPC, UTS and network namespaces and a file system that
	// shows only the system folders and toolchains (read-only) and the
	// step's own folders (writable).
	Isolated bool
	// Name is the sandbox and its version ("bubblewrap 0.8.0"), when
	// Isolated.
	Name string
	// Namespaces lists the namespaces each step gets.
	Namespaces []string
	// Network is true when steps have no network (always when Isolated;
	// also in the network-namespace fallback).
	Network bool
	// Reason says why steps are not isolated, when Isolated is false.
	Reason string
	// Caveat says what the sandbox does not hold on this host, when
	// Isolated; empty when it holds everything. It is for the log: the
	// build's records do not depend on it.
	Caveat string
}

// Level is the isolation level: [LevelSandbox], [LevelNetwork] or
// [LevelNone].
func (s Sandbox) Level() string {
	switch {
	case s.Isolated:
		return LevelSandbox
	case s.Network:
		return LevelNetwork
	}
	return LevelNone
}

// Describe says in a few words how steps run, for logs.
func (s Sandbox) Describe() string {
	if s.Isolated {
		return "sandboxed (" + s.Name + ": " + strings.Join(s.Namespaces, ", ") + " namespaces; network isolated)"
	}
	what := "NOT sandboxed"
	if s.Network {
		what += ", network isolated only"
	} else {
		what += ", NOT network isolated"
	}
	return what + ": " + s.Reason
}

// Options configure [New].
type Options struct {
	// Bwrap is the bubblewrap binary; empty finds "bwrap" on PATH.
	Bwrap string
}

// Executor runs actions.
type Executor struct {
	sandbox Sandbox
	// wrapper is how this platform's steps are wrapped (its sandbox_*.go).
	wrapper
}

// Sandbox says how actions are isolated.
func (e *Executor) Sandbox() Sandbox { return e.sandbox }

// killGroup kills the command's process group (on Windows, its process
// tree). It is best effort: the step has failed either way, and Wait ends
// when the processes holding its output do (or after WaitDelay).
func killGroup(cmd *exec.Cmd) {
	_ = procgroup.Kill(cmd)
}
