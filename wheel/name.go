package wheel

import (
	"fmt"
	"strings"

	"github.com/mkrelease/mkrelease/internal/dist/ext"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// Ext ends every wheel's file name.
const Ext = ext.Wheel

// Filename is a parsed wheel file name (PEP 427, as amended by the binary
// distribution format specification):
// {distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}.whl.
type Filename struct {
	// Distribution is the escaped name as it appears in the file name
	// (normalised, with "-" replaced by "_").
	Distribution string
	// Version is as written in the file name: normalised (PEP 440) when
	// built by NewFilename, possibly not when parsed from a foreign file.
	Version  string
	Build    string // optional build tag, starts with a digit
	Python   string // e.g. "py3"; may be a dotted set
	ABI      string // e.g. "none"
	Platform string // e.g. "manylinux_2_17_x86_64"; may be a dotted set
}

// NewFilename builds the file name of a wheel from its project name and
// version, normalising both.
func NewFilename(name, version, python, abi, platform string) (Filename, error) {
	if err := pyname.Valid(name); err != nil {
		return Filename{}, err
	}
	v, err := pep440.Parse(version)
	if err != nil {
		return Filename{}, err
	}
	return Filename{Distribution: pyname.WheelEscape(name), Version: escapeVersion(v.String()), Python: python, ABI: abi, Platform: platform}, nil
}

// escapeVersion replaces "-" (only possible in a local version segment that
// was not normalised) with "_" as the file name rules require.
func escapeVersion(v string) string { return strings.ReplaceAll(v, "-", "_") }

// String renders the file name.
func (f Filename) String() string {
	parts := []string{f.Distribution, f.Version}
	if f.Build != "" {
		parts = append(parts, f.Build)
	}
	parts = append(parts, f.Python, f.ABI, f.Platform)
	return strings.Join(parts, "-") + Ext
}

// Pure reports whether the wheel is pure Python for every platform and
// every Python 3: tagged py3-none-any, the tag mkrelease gives a wheel with
// no native code.
func (f Filename) Pure() bool { return f.Python == "py3" && f.ABI == "none" && f.Platform == "any" }

// DistInfo is the name of the .dist-info folder.
func (f Filename) DistInfo() string { return f.Distribution + "-" + f.Version + ".dist-info" }

// Data is the name of the .data folder.
func (f Filename) Data() string { return f.Distribution + "-" + f.Version + ".data" }

// Tags lists every python-abi-platform tag the name expands to.
func (f Filename) Tags() []string {
	var tags []string
	for _, py := range strings.Split(f.Python, ".") {
		for _, abi := range strings.Split(f.ABI, ".") {
			for _, plat := range strings.Split(f.Platform, ".") {
				tags = append(tags, py+"-"+abi+"-"+plat)
			}
		}
	}
	return tags
}

// ParseFilename parses a wheel file name (the base name, with .whl).
func ParseFilename(name string) (Filename, error) {
	base, ok := strings.CutSuffix(name, Ext)
	if !ok {
		return Filename{}, fmt.Errorf("wheel file name %q does not end in .whl", name)
	}
	parts := strings.Split(base, "-")
	var f Filename
	switch len(parts) {
	case 5:
		f = Filename{parts[0], parts[1], "", parts[2], parts[3], parts[4]}
	case 6:
		f = Filename{parts[0], parts[1], parts[2], parts[3], parts[4], parts[5]}
		if f.Build == "" || f.Build[0] < '0' || f.Build[0] > '9' {
			return Filename{}, fmt.Errorf("wheel file name %q: build tag %q must start with a digit", name, f.Build)
		}
	default:
		return Filename{}, fmt.Errorf("wheel file name %q: want NAME-VERSION[-BUILD]-PY-ABI-PLATFORM.whl", name)
	}
	for _, p := range parts {
		if p == "" {
			return Filename{}, fmt.Errorf("wheel file name %q has an empty component", name)
		}
	}
	if err := pyname.Valid(f.Distribution); err != nil {
		return Filename{}, fmt.Errorf("wheel file name %q: %w", name, err)
	}
	if _, err := pep440.Parse(f.Version); err != nil {
		return Filename{}, fmt.Errorf("wheel file name %q: %w", name, err)
	}
	return f, nil
}
