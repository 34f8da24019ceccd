//go:build linux

package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxSecrets bounds what is read from the secrets' descriptor.
const maxSecrets = 1 << 20

// takeSecrets takes mkrelease's secrets out of its environment. The
// kernel keeps the environment a process was started with for
// /proc/PID/environ, whatever the process changes later, so when a secret
// is set mkrelease starts itself again (execve, the same process) with an
// environment without it, and hands the secrets to the new program on a
// pipe whose descriptor $MKRELEASE_SECRET_FD names; the new program reads
// them, closes it and goes on. When that is not possible (no
// /proc/self/exe), the secrets are still removed from what the processes
// mkrelease starts inherit.
func takeSecrets() secrets {
	if fd, ok := os.LookupEnv(secretFDVar); ok {
		os.Unsetenv(secretFDVar)
		if s, ok := readSecrets(fd); ok {
			return s
		}
	}
	s, rest := fromEnviron(os.Environ())
	if len(s) > 0 {
		reexec(s, rest) // returns only when it could not
	}
	unsetSecrets()
	return s
}

// reexec executes mkrelease again with the environment rest and the
// secrets s on a pipe; it returns only if that failed.
func reexec(s secrets, rest []string) {
	var buf bytes.Buffer
	for k, v := range s {
		buf.WriteString(k + "=" + v + "\x00")
	}
	var p [2]int
	// Without O_CLOEXEC: the read end must survive the execve.
	if err := unix.Pipe2(p[:], 0); err != nil {
		return
	}
	// The pipe's buffer (64 KiB) holds a few secrets: the write does not
	// block.
	if n, err := unix.Write(p[1], buf.Bytes()); err != nil || n != buf.Len() {
		unix.Close(p[0])
		unix.Close(p[1])
		return
	}
	unix.Close(p[1])
	env := append(rest, secretFDVar+"="+strconv.Itoa(p[0]))
	_ = unix.Exec("/proc/self/exe", os.Args, env)
	unix.Close(p[0])
}

// readSecrets reads the secrets from the descriptor fd names, which must
// be a pipe, and closes it.
func readSecrets(fd string) (secrets, bool) {
	n, err := strconv.Atoi(fd)
	if err != nil || n < 3 {
		return nil, false
	}
	var st unix.Stat_t
	if unix.Fstat(n, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return nil, false
	}
	unix.CloseOnExec(n)
	f := os.NewFile(uintptr(n), "secrets")
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecrets))
	if err != nil {
		return nil, false
	}
	s := secrets{}
	for _, kv := range strings.Split(string(data), "\x00") {
		if k, v, ok := strings.Cut(kv, "="); ok && isSecretVar(k) {
			s[k] = v
		}
	}
	return s, true
}
