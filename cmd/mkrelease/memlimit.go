package main

import "runtime/debug"

// memoryLimit is the soft limit mkrelease gives Go's garbage collector
// unless GOMEMLIMIT sets another. What mkrelease holds at once is bounded
// by design, whatever the size of the release: the wheel writer's 64 MiB
// of compressed output waiting for its turn, a signing key's scrypt (64
// MiB for the moment it runs, which may be while a wheel is written),
// the bundle writer's blocks and the 1 MiB segments being deflated. With
// the collector's default pacing (GOGC=100) the heap may grow to twice
// that before it is collected: a build of three 423 MiB targets peaked at
// 231 MiB of RSS. Under this limit the collector runs earlier instead,
// and the same build peaks at about 145 MiB, no slower.
const memoryLimit = 128 << 20

// applyMemoryLimit sets memoryLimit as the collector's soft limit unless
// the environment (lookup) sets GOMEMLIMIT, which the runtime has then
// already applied. It returns the limit now in force.
func applyMemoryLimit(lookup func(string) (string, bool)) int64 {
	if _, set := lookup("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(memoryLimit)
	}
	return debug.SetMemoryLimit(-1)
}
