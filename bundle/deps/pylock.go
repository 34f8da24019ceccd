package deps

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/internal/tomlkeys"
	"github.com/mkrelease/mkrelease/wheel"
)

// pylockDoc is pylock.toml as the specification defines it (lock-version
// 1.0). Pointers tell a missing key from an empty one.
type pylockDoc struct {
	LockVersion      *string         `toml:"lock-version"`
	Environments     []string        `toml:"environments"`
	RequiresPython   *string         `toml:"requires-python"`
	Extras           []string        `toml:"extras"`
	DependencyGroups []string        `toml:"dependency-groups"`
	DefaultGroups    []string        `toml:"default-groups"`
	CreatedBy        *string         `toml:"created-by"`
	Packages         []pylockPackage `toml:"packages"`
	Tool             map[string]any  `toml:"tool"`
}

type pylockPackage struct {
	Name                  *string          `toml:"name"`
	Version               *string          `toml:"version"`
	Marker                *string          `toml:"marker"`
	RequiresPython        *string          `toml:"requires-python"`
	Dependencies          []map[string]any `toml:"dependencies"`
	VCS                   map[string]any   `toml:"vcs"`
	Directory             map[string]any   `toml:"directory"`
	Archive               map[string]any   `toml:"archive"`
	Index                 *string          `toml:"index"`
	Sdist                 *pylockFile      `toml:"sdist"`
	Wheels                []pylockFile     `toml:"wheels"`
	AttestationIdentities []map[string]any `toml:"attestation-identities"`
	Tool                  map[string]any   `toml:"tool"`
}

type pylockFile struct {
	Name       *string           `toml:"name"`
	UploadTime any               `toml:"upload-time"`
	URL        *string           `toml:"url"`
	Path       *string           `toml:"path"`
	Size       *int64            `toml:"size"`
	Hashes     map[string]string `toml:"hashes"`
}

// ReadPylock reads a PEP 751 lock file; see [ParsePylock].
func ReadPylock(path string) (*Lock, error) {
	data, err := readLockFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePylock(path, data)
}

// ParsePylock parses a pylock.toml (the PyPA "pylock.toml specification",
// originally PEP 751); file names it in messages, and relative paths in
// it are resolved against file's folder.
//
// It requires lock-version "1.0" (another 1.x is read with a note, keys it
// does not know ignored; another major version is refused), created-by,
// and for every package a valid name and version. A package's sources are
// checked as the specification says: vcs, directory and archive exclude
// each other and sdist and wheels. Every wheel and sdist needs a hashes
// table with a sha256 entry (mkrelease verifies sha256), a url or a path,
// and a file name (given, or the last component of the url or path) that
// belongs to the package and version. Markers are parsed with package
// pep508, which does not know the lock-only variables extras and
// dependency_groups: a lock that selects packages by extras or dependency
// groups is refused; export a single-use lock of the runtime dependencies.
// Unknown keys are errors, naming the key, line and column. Keys are
// case-sensitive ([tomlkeys.Check]): a key that differs from one the
// specification defines only in case (`Name`, `Hashes`) is refused whatever
// the lock-version, since the decoder would read it as that key. Entries
// whose source is not a wheel are kept (with Source or Sdist set) and
// refused only if a target needs them.
func ParsePylock(file string, data []byte) (*Lock, error) {
	unknown := tomlkeys.Check(data, &pylockDoc{})
	for _, u := range unknown {
		if u.Declared != "" {
			return nil, unknownKey(file, u)
		}
	}
	var doc pylockDoc
	if err := toml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil, tomlError(file, err)
	}
	lock := &Lock{File: file, Format: FormatPylock}
	fail := func(entry, msg, hint string) error {
		return &LockError{File: file, Entry: entry, Msg: msg, Hint: hint}
	}
	if doc.LockVersion == nil {
		return nil, fail("lock-version", "missing", `a pylock.toml starts with lock-version = "1.0"`)
	}
	major, minor, _ := strings.Cut(*doc.LockVersion, ".")
	switch {
	case major != "1" || minor == "" || strings.Trim(minor, "0123456789") != "":
		return nil, fail("lock-version", fmt.Sprintf("%q is not supported", *doc.LockVersion), `mkrelease reads lock-version "1.0"`)
	case *doc.LockVersion != "1.0":
		lock.Notes = append(lock.Notes, Note{Where: file + ": lock-version", Msg: fmt.Sprintf("%q is newer than the 1.0 mkrelease knows: keys it does not know are ignored", *doc.LockVersion)})
	default:
		// Version 1.0: every key must be one the specification defines.
		if len(unknown) > 0 {
			return nil, unknownKey(file, unknown[0])
		}
	}
	if doc.CreatedBy == nil || *doc.CreatedBy == "" {
		return nil, fail("created-by", "missing", "the specification requires the name of the tool that wrote the lock")
	}
	if doc.RequiresPython != nil {
		s, err := pep440.ParseSpecifiers(*doc.RequiresPython)
		if err != nil {
			return nil, fail("requires-python", err.Error(), "")
		}
		lock.RequiresPython = &s
	}
	for i, e := range doc.Environments {
		m, err := pep508.ParseMarker(e)
		if err != nil {
			return nil, fail(fmt.Sprintf("environments[%d]", i), err.Error(), "")
		}
		lock.Environments = append(lock.Environments, m)
	}
	if doc.Packages == nil {
		return nil, fail("packages", "missing", "a pylock.toml lists its packages as [[packages]] tables")
	}
	for i, pp := range doc.Packages {
		p, err := pylockPackageOf(file, i, pp)
		if err != nil {
			return nil, err
		}
		lock.Packages = append(lock.Packages, p)
	}
	return lock, nil
}

// pylockPackageOf checks one [[packages]] entry and converts it.
func pylockPackageOf(file string, i int, pp pylockPackage) (Locked, error) {
	entry := fmt.Sprintf("packages[%d]", i)
	if pp.Name != nil {
		entry += fmt.Sprintf(" (%s)", *pp.Name)
	}
	fail := func(msg, hint string) error {
		return &LockError{File: file, Entry: entry, Msg: msg, Hint: hint}
	}
	if pp.Name == nil {
		return Locked{}, fail("no name", "every package needs name = \"...\"")
	}
	if err := pyname.Valid(*pp.Name); err != nil {
		return Locked{}, fail(err.Error(), "")
	}
	p := Locked{Name: pyname.Normalize(*pp.Name), Where: file + ": " + entry}
	if pp.Version == nil {
		return Locked{}, fail("no version", "mkrelease bundles pinned releases: record the version of every package")
	}
	v, err := pep440.Parse(*pp.Version)
	if err != nil {
		return Locked{}, fail(err.Error(), "")
	}
	p.Version = v.String()
	if pp.Marker != nil {
		m, err := pep508.ParseMarker(*pp.Marker)
		if err != nil {
			hint := ""
			if strings.Contains(*pp.Marker, "extras") || strings.Contains(*pp.Marker, "dependency_groups") {
				hint = "markers on extras or dependency groups need a multi-use lock, which mkrelease does not read: export a single-use lock of the runtime dependencies"
			}
			return Locked{}, fail("marker: "+err.Error(), hint)
		}
		p.Marker = m
	}
	if pp.RequiresPython != nil {
		s, err := pep440.ParseSpecifiers(*pp.RequiresPython)
		if err != nil {
			return Locked{}, fail("requires-python: "+err.Error(), "")
		}
		p.RequiresPython = &s
	}
	if pp.Index != nil {
		p.Index = *pp.Index
	}
	var direct []string
	for _, s := range []struct {
		name string
		set  bool
	}{{"vcs", pp.VCS != nil}, {"directory", pp.Directory != nil}, {"archive", pp.Archive != nil}} {
		if s.set {
			direct = append(direct, s.name)
		}
	}
	switch {
	case len(direct) > 1:
		return Locked{}, fail(fmt.Sprintf("both %s and %s are set", direct[0], direct[1]), "they are mutually exclusive: keep one source")
	case len(direct) == 1 && (pp.Sdist != nil || len(pp.Wheels) > 0):
		return Locked{}, fail(direct[0]+" is set together with sdist or wheels", "they are mutually exclusive: keep one source")
	case len(direct) == 1:
		p.Source = direct[0]
	case pp.Sdist == nil && len(pp.Wheels) == 0:
		return Locked{}, fail("no source: none of wheels, sdist, archive, directory or vcs", "lock the package's wheels")
	}
	names := map[string]bool{}
	for j, w := range pp.Wheels {
		lf, err := pylockFileOf(file, fmt.Sprintf("wheels[%d]", j), w)
		if err != nil {
			return Locked{}, fail(err.Error(), "")
		}
		fn, err := wheel.ParseFilename(lf.Name)
		if err != nil {
			return Locked{}, fail(fmt.Sprintf("wheels[%d]: %v", j, err), "")
		}
		if err := belongs(fn.Distribution, fn.Version, p); err != nil {
			return Locked{}, fail(fmt.Sprintf("wheels[%d]: %s %v", j, lf.Name, err), "")
		}
		if names[lf.Name] {
			return Locked{}, fail(fmt.Sprintf("wheels[%d]: %s is listed twice", j, lf.Name), "list each wheel once")
		}
		names[lf.Name] = true
		p.Wheels = append(p.Wheels, lf)
	}
	if pp.Sdist != nil {
		lf, err := pylockFileOf(file, "sdist", *pp.Sdist)
		if err != nil {
			return Locked{}, fail(err.Error(), "")
		}
		p.Sdist = &lf
	}
	return p, nil
}

// belongs checks that a file name's distribution and version are p's.
func belongs(dist, version string, p Locked) error {
	if pyname.Normalize(dist) != p.Name {
		return fmt.Errorf("is not a file of %s", p.Name)
	}
	v, err := pep440.Parse(version)
	if err != nil || v.String() != p.Version {
		return fmt.Errorf("is not version %s", p.Version)
	}
	return nil
}

// pylockFileOf checks one wheel or sdist table.
func pylockFileOf(file, what string, f pylockFile) (LockedFile, error) {
	var lf LockedFile
	if f.URL == nil && f.Path == nil {
		return lf, fmt.Errorf("%s: neither url nor path is set; the specification requires one", what)
	}
	if f.URL != nil {
		u, err := url.Parse(*f.URL)
		if err != nil || u.Scheme == "" {
			return lf, fmt.Errorf("%s: url %q is not an absolute URL", what, *f.URL)
		}
		lf.URL = *f.URL
	}
	if f.Path != nil {
		if *f.Path == "" {
			return lf, fmt.Errorf("%s: empty path", what)
		}
		lf.Path = absLockPath(file, *f.Path)
	}
	switch {
	case f.Name != nil:
		lf.Name = *f.Name
	case f.Path != nil:
		lf.Name = path.Base(strings.ReplaceAll(*f.Path, `\`, "/"))
	default:
		u, _ := url.Parse(*f.URL)
		lf.Name = path.Base(u.Path)
	}
	if lf.Name == "" || lf.Name == "." || lf.Name == "/" || strings.ContainsAny(lf.Name, `/\`) {
		return lf, fmt.Errorf("%s: file name %q is not a file name", what, lf.Name)
	}
	if f.Size != nil {
		if *f.Size <= 0 {
			return lf, fmt.Errorf("%s: size %d is not a file size", what, *f.Size)
		}
		lf.Size = *f.Size
	}
	if len(f.Hashes) == 0 {
		return lf, fmt.Errorf("%s: no hashes; the specification requires at least one (mkrelease verifies sha256)", what)
	}
	d, ok := f.Hashes["sha256"]
	if !ok {
		return lf, fmt.Errorf("%s: no sha256 in hashes; mkrelease verifies sha256", what)
	}
	if !isHexDigest(d) {
		return lf, fmt.Errorf("%s: sha256 %q is not 64 hex digits", what, d)
	}
	lf.SHA256 = strings.ToLower(d)
	return lf, nil
}

// unknownKey is the *LockError of a key pylock.toml 1.0 does not define
// with that spelling.
func unknownKey(file string, u tomlkeys.Unknown) *LockError {
	hint := u.Hint
	if u.Declared == "" {
		hint = "pylock.toml 1.0 does not define it; tool-specific data goes under [tool] or [packages.tool]"
		if u.Closest != "" {
			hint = fmt.Sprintf("did you mean %q? ", u.Closest) + hint
		}
	}
	return &LockError{File: file, Line: u.Line, Column: u.Column, Entry: u.Path, Msg: u.Msg, Hint: hint}
}

// tomlError turns a go-toml decoding error into a *LockError with the line,
// column and key.
func tomlError(file string, err error) error {
	var de *toml.DecodeError
	if errors.As(err, &de) {
		row, col := de.Position()
		return &LockError{File: file, Line: row, Column: col, Entry: strings.Join(de.Key(), "."), Msg: strings.TrimPrefix(de.Error(), "toml: ")}
	}
	return &LockError{File: file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
}
