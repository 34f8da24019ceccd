// Package proctest looks up processes for tests that check what outlives
// what: whether a process still runs, and which processes carry a marker
// in their command line. It reads Linux's /proc; where there is none it
// finds nothing.
package proctest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Running says whether pid runs and is not a zombie waiting for its
// reaper (a container's first process may never reap the orphans it
// inherits).
func Running(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// WithMarker lists the processes whose command line contains marker. A
// zombie's command line is empty, so only live processes are listed.
func WithMarker(marker string) []int {
	var pids []int
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		if b, err := os.ReadFile(f); err == nil && bytes.Contains(b, []byte(marker)) {
			if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}
