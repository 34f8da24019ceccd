//go:build !linux

package hostload

// Read returns ErrUnsupported: outside Linux there is no /proc to read
// the run queue and steal time from, so a timed lane is not watched
// (its lane_timeout and the noise bound still hold).
func Read() (Sample, error) { return Sample{}, ErrUnsupported }

// ReadCPUs returns ErrUnsupported outside Linux (see [Read]).
func ReadCPUs() (CPUs, error) { return CPUs{}, ErrUnsupported }
