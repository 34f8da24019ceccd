package main

import (
	"runtime/debug"
	"testing"
)

func TestApplyMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(before) })
	for _, tc := range []struct {
		name   string
		env    map[string]string
		preset int64 // the limit in force before, as the runtime set it from GOMEMLIMIT
		want   int64
	}{
		{"unset", nil, before, memoryLimit},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, 1 << 30, 1 << 30},
		{"GOMEMLIMIT=off", map[string]string{"GOMEMLIMIT": "off"}, before, before},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetMemoryLimit(tc.preset)
			lookup := func(k string) (string, bool) { v, ok := tc.env[k]; return v, ok }
			if got := applyMemoryLimit(lookup); got != tc.want {
				t.Errorf("limit %d, want %d", got, tc.want)
			}
			if got := debug.SetMemoryLimit(-1); got != tc.want {
				t.Errorf("limit in force %d, want %d", got, tc.want)
			}
		})
	}
}
