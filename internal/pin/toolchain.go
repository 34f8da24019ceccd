package pin

// Toolchain is the locked identity of one toolchain (for one target, when
// Target is set), as release.lock records it (TOML, in this key order),
// manifest.json and part.json describe it (JSON) and the provenance names
// it: the first line of the output of its version command, and the sha256
// of the executable that command runs, so that a compiler swapped behind
// the same version line is another toolchain.
type Toolchain struct {
	// Name is the toolchain's name in release.toml.
	Name string `toml:"name" json:"name"`
	// Target is the target it is locked for, when it is per-target.
	Target string `toml:"target,omitempty" json:"target,omitempty"`
	// Version is the first line of its version command's output.
	Version string `toml:"version" json:"version"`
	// SHA256 is the hex digest of the executable its command runs: the
	// command's first word found on the steps' PATH (the toolchains' own
	// folders, then the host's), symbolic links followed. A lock written
	// before mkrelease recorded it has none, and drifts.
	SHA256 string `toml:"sha256" json:"sha256"`
	// Executable is the file that was hashed, on this machine, for
	// messages; it is never written (a host path is no identity).
	Executable string `toml:"-" json:"-"`
}

// Key names the toolchain entry in messages: "go", "cc [linux-aarch64]".
func (t Toolchain) Key() string {
	if t.Target == "" {
		return t.Name
	}
	return t.Name + " [" + t.Target + "]"
}
