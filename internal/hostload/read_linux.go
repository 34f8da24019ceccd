//go:build linux

package hostload

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Read samples the host's load now, from /proc/stat and /proc/loadavg.
func Read() (Sample, error) {
	stat, err1 := os.ReadFile("/proc/stat")
	loadavg, err2 := os.ReadFile("/proc/loadavg")
	if err1 != nil && err2 != nil {
		return Sample{}, errors.Join(err1, err2)
	}
	return NewSample(time.Now(), stat, loadavg)
}

// ReadCPUs finds the host's online CPUs (the cpuN lines of /proc/stat,
// else the CPUs Go sees) and the CPUs this process may use: its
// scheduler affinity and its cgroup's CPU quota, whichever is fewer.
func ReadCPUs() (CPUs, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return CPUs{}, err
	}
	st, err := ParseStat(data)
	if err != nil {
		return CPUs{}, err
	}
	c := CPUs{Online: st.CPUs}
	if c.Online == 0 {
		c.Online = runtime.NumCPU()
	}
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) == nil {
		c.Allowed = set.Count()
	}
	if q, ok := cgroupQuota(); ok {
		n := max(int(math.Ceil(q)), 1)
		if c.Allowed == 0 || n < c.Allowed {
			c.Allowed = n
		}
	}
	return c, nil
}

// cgroupRoot is where the cgroup file systems are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// cgroupQuota is the smallest CPU quota of the process's cgroup and its
// parents (cgroup v2 cpu.max), or of its cgroup v1 cpu controller
// (cpu.cfs_quota_us); ok is false when there is none or it cannot be
// read. In a container the path /proc/self/cgroup names may be the
// host's: the mount's root, which is then the container's cgroup, is
// read too.
func cgroupQuota() (cpus float64, ok bool) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0, false
	}
	v2, v1 := CgroupPaths(data)
	least := func(q float64, has bool) {
		if has && (!ok || q < cpus) {
			cpus, ok = q, true
		}
	}
	if v2 != "" {
		for _, dir := range []string{filepath.Join(cgroupRoot, v2), cgroupRoot} {
			for d := dir; strings.HasPrefix(d, cgroupRoot); d = filepath.Dir(d) {
				if b, err := os.ReadFile(filepath.Join(d, "cpu.max")); err == nil {
					q, has, err := ParseCPUMax(b)
					least(q, has && err == nil)
				}
				if d == cgroupRoot {
					break
				}
			}
		}
	}
	if v1 != "" {
		for _, mount := range []string{"cpu", "cpu,cpuacct", "cpuacct,cpu"} {
			for _, dir := range []string{filepath.Join(cgroupRoot, mount, v1), filepath.Join(cgroupRoot, mount)} {
				q, err1 := os.ReadFile(filepath.Join(dir, "cpu.cfs_quota_us"))
				p, err2 := os.ReadFile(filepath.Join(dir, "cpu.cfs_period_us"))
				if err1 == nil && err2 == nil {
					n, has, err := ParseCFSQuota(q, p)
					least(n, has && err == nil)
				}
			}
		}
	}
	return cpus, ok
}
