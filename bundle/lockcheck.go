package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/internal/tomlkeys"
	"github.com/mkrelease/mkrelease/wheel"
)

// The two locks of a bundle are checked to be exactly what mkrelease
// writes for the bundle's wheels: pip reads requirements.txt
// with its own rules (lines split at form feeds and Unicode line
// separators, comments stripped at " #", a trailing backslash joining
// lines, ${VAR} expanded from the environment, any line starting with "-"
// an option such as --find-links or --index-url), so anything but the
// generated form may make pip install something from outside the bundle.
// The checks parse each file strictly, line by line, tie every pin to a
// wheel of the bundle, then regenerate the file from what they parsed and
// the bundle's manifest and compare byte for byte.

// maxLockLine is the longest line a bundle's requirements.txt or
// pylock.toml may hold. mkrelease writes lines of at most a few hundred
// bytes; a longer line is refused, since a reader with a line limit (Go's
// bufio.Scanner stops at 64 KiB) stops there and misses what follows.
const maxLockLine = 4096

// maxProblems caps the problems listed for one file.
const maxProblems = 20

// problem is one finding of the lock, manifest or installer checks before
// the check it belongs to is known: the file, a line (0 when the finding
// is about the whole file), what is wrong, and the wanted and the found
// value when it compares one. Open makes each a [Finding] of its check;
// the bundle writer checks its own locks with the same functions.
type problem struct {
	file      string
	line      int
	msg       string
	want, got string
}

func (p problem) text() string {
	if p.line > 0 {
		return fmt.Sprintf("line %d: %s", p.line, p.msg)
	}
	return p.msg
}

// finding is p as a finding of check: the line is its member, and its
// message is p.text().
func (p problem) finding(check string) Finding {
	f := Finding{Check: check, File: p.file, Want: p.want, Got: p.got, Msg: p.text()}
	if p.line > 0 {
		f.Member = fmt.Sprintf("line %d", p.line)
	}
	return f
}

// problems collects the problems of one file, up to maxProblems.
type problems struct {
	file string
	list []problem
}

func (ps *problems) add(line int, format string, args ...any) {
	ps.addDiff(line, "", "", format, args...)
}

// addDiff is add for a problem that compares want with got.
func (ps *problems) addDiff(line int, want, got, format string, args ...any) {
	switch {
	case len(ps.list) < maxProblems:
		ps.list = append(ps.list, problem{file: ps.file, line: line, msg: fmt.Sprintf(format, args...), want: want, got: got})
	case len(ps.list) == maxProblems:
		ps.list = append(ps.list, problem{file: ps.file, msg: "more problems follow; fix these first"})
	}
}

func (ps *problems) ok() bool { return len(ps.list) == 0 }

// bundleWheel is one wheel file of an extracted bundle.
type bundleWheel struct {
	rel     string // wheels/NAME.whl or dependencies/NAME.whl
	name    string // normalised project name, from the file name
	version string // normalised version, from the file name
	sha256  string
	size    int64
}

func (w bundleWheel) base() string {
	return strings.TrimPrefix(strings.TrimPrefix(w.rel, deps.OwnDir+"/"), deps.DependencyDir+"/")
}

func (w bundleWheel) own() bool { return strings.HasPrefix(w.rel, deps.OwnDir+"/") }

// newBundleWheel describes the wheel at rel (wheels/X or dependencies/X)
// with its digest and size.
func newBundleWheel(rel, sha string, size int64) (bundleWheel, error) {
	base := rel[strings.LastIndexByte(rel, '/')+1:]
	fn, err := wheel.ParseFilename(base)
	if err != nil {
		return bundleWheel{}, err
	}
	v, err := pep440.Parse(strings.ReplaceAll(fn.Version, "_", "-"))
	if err != nil {
		return bundleWheel{}, err
	}
	return bundleWheel{rel: rel, name: pyname.Normalize(fn.Distribution), version: v.String(), sha256: sha, size: size}, nil
}

// pin is one package requirements.txt pins: NAME==VERSION, an optional
// marker and the sha256 of each of its wheels.
type pin struct {
	line          int
	name, version string
	marker        *pep508.Marker
	hashes        []string
	hashLines     []int
}

var (
	pinRE  = regexp.MustCompile(`^([a-z0-9]+(?:-[a-z0-9]+)*)==([0-9a-z.!+]+)(?: ; (.+))? \\$`)
	hashRE = regexp.MustCompile(`^    --hash=sha256:([0-9a-f]{64})( \\)?$`)
	// encodingRE is pip's test for a PEP 263 encoding declaration in the
	// first two lines; pip would decode the file with the encoding named.
	encodingRE = regexp.MustCompile(`coding[:=]`)
)

// riskyOptions explains what an option line would make pip do.
var riskyOptions = map[string]string{
	"-f": "pip would look for wheels in that folder or URL, outside the bundle", "--find-links": "pip would look for wheels in that folder or URL, outside the bundle",
	"-i": "pip would install from that package index", "--index-url": "pip would install from that package index",
	"--extra-index-url": "pip would install from that package index too", "--no-index": "mkrelease passes --no-index itself",
	"-r": "pip would read another requirements file, from outside the bundle", "--requirement": "pip would read another requirements file, from outside the bundle",
	"-c": "pip would read a constraints file from outside the bundle", "--constraint": "pip would read a constraints file from outside the bundle",
	"-e": "pip would install a source tree or a VCS URL", "--editable": "pip would install a source tree or a VCS URL",
	"--trusted-host": "pip would trust that host without TLS", "--hash": "a --hash line must follow a pin ending in a backslash",
	"--pre": "pip would change which versions it considers", "--prefer-binary": "pip would change which files it considers",
	"--only-binary": "pip would change which files it considers", "--no-binary": "pip would build from source distributions",
	"--use-feature": "pip would change how it resolves", "--config-settings": "pip would pass settings to a build backend",
}

// lines splits a lock file into its lines (without the newlines),
// checking what every reader must agree on: only printable ASCII, "\n"
// line ends, a final newline and no line longer than maxLockLine. A line
// with a problem comes back as "" in bad.
func lines(data []byte, ps *problems) (out []string, bad map[int]bool) {
	bad = map[int]bool{}
	if len(data) == 0 {
		ps.add(0, "empty: mkrelease writes every wheel of the bundle into it")
		return nil, bad
	}
	text := string(data)
	if !strings.HasSuffix(text, "\n") {
		ps.add(strings.Count(text, "\n")+1, "no newline at the end: mkrelease ends every line with one")
		text += "\n"
	}
	out = strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range out {
		n := i + 1
		if len(l) > maxLockLine {
			ps.add(n, "%d bytes long, over the limit of %d: a reader with a line limit stops at such a line and misses what follows it", len(l), maxLockLine)
			bad[n] = true
			continue
		}
		for j := 0; j < len(l); j++ {
			c := l[j]
			if c >= 0x20 && c <= 0x7e {
				continue
			}
			what := fmt.Sprintf("byte 0x%02x", c)
			switch c {
			case '\r':
				what = "a carriage return"
			case '\t':
				what = "a tab"
			case '\f', '\v', 0x1c, 0x1d, 0x1e:
				what += ", which pip reads as a line break"
			}
			ps.add(n, "%s at column %d: mkrelease writes printable ASCII only (pip also breaks lines at form feeds, vertical tabs and Unicode line separators, so other bytes can hide a line)", what, j+1)
			bad[n] = true
			break
		}
	}
	return out, bad
}

// requirementsHeader is the comment block mkrelease writes at the top of a
// bundle's requirements.txt for target.
func requirementsHeader(target deps.Target) []string {
	h := string(deps.RequirementsTxt(&deps.Closure{Target: target}))
	return strings.Split(strings.TrimSuffix(h, "\n"), "\n")
}

// checkRequirementsTxt checks a bundle's requirements.txt against the
// bundle's wheels: the exact generated form (the header for target, then
// one "NAME==VERSION [; MARKER] \" line per package followed by one
// "    --hash=sha256:HEX" line per wheel), every hash a wheel of the bundle
// whose file name has that name and version, every wheel pinned once, and
// the text byte for byte what mkrelease writes for them. target nil (no
// usable manifest) skips the comparisons that need it. It returns the pins
// it read.
func checkRequirementsTxt(data []byte, target *deps.Target, wheels []bundleWheel) ([]pin, []problem) {
	ps := &problems{file: "requirements.txt"}
	ls, bad := lines(data, ps)
	var header []string
	if target != nil {
		header = requirementsHeader(*target)
	}
	var pins []pin
	cont := false // the line before ends in a backslash: pip joins this one to it
	cur := -1     // the pin the hash lines belong to; -1 after a line with a problem
	for i, l := range ls {
		n := i + 1
		if bad[n] {
			cont, cur = strings.HasSuffix(l, `\`), -1
			continue
		}
		trimmed := strings.TrimLeft(l, " ")
		switch {
		case cont:
			m := hashRE.FindStringSubmatch(l)
			if m == nil {
				ps.add(n, "line %d ends in a backslash, so pip joins this line to it; mkrelease writes only \"    --hash=sha256:<64 hex digits>\" there", n-1)
				cont, cur = strings.HasSuffix(l, `\`), -1
				continue
			}
			if cur >= 0 {
				pins[cur].hashes = append(pins[cur].hashes, m[1])
				pins[cur].hashLines = append(pins[cur].hashLines, n)
			}
			cont = m[2] != ""
		case l == "":
			ps.add(n, "a blank line: mkrelease writes none")
		case strings.HasPrefix(trimmed, "#"):
			if n <= 2 && encodingRE.MatchString(l) {
				ps.add(n, "the comment declares an encoding (PEP 263 \"coding:\"), which pip would decode the file with")
				continue
			}
			switch {
			case header == nil && n <= 4:
			case n <= len(header) && l == header[n-1]:
			case n <= len(header):
				ps.add(n, "the header comment differs from the one mkrelease writes for this bundle (%q)", header[n-1])
			default:
				ps.add(n, "a comment mkrelease does not write: pip ignores it, but only the generated header is allowed")
			}
		case strings.HasPrefix(trimmed, "-"):
			opt, _, _ := strings.Cut(strings.Fields(trimmed)[0], "=")
			why, ok := riskyOptions[opt]
			if !ok {
				why = "pip would take it as an option of the install"
			}
			ps.add(n, "an option line (%s): %s; a bundle's requirements.txt holds only pins of the bundle's own wheels", opt, why)
		default:
			p, why := parsePin(l)
			if why != "" {
				ps.add(n, "%s", why)
				cont, cur = strings.HasSuffix(l, `\`), -1
				continue
			}
			p.line = n
			pins = append(pins, p)
			cont, cur = true, len(pins)-1
		}
	}
	if cont && len(ls) > 0 && !bad[len(ls)] {
		ps.add(len(ls), "ends in a backslash with no line after it")
	}
	if !ps.ok() {
		return pins, ps.list
	}
	checkPins(pins, wheels, ps)
	if !ps.ok() || target == nil {
		return pins, ps.list
	}
	want := deps.RequirementsTxt(closureOf(*target, pins, wheels))
	if n, w, g, differ := firstDifference(want, data); differ {
		ps.addDiff(n, w, g, "differs from what mkrelease writes for this bundle's wheels: want %q, got %q", w, g)
	}
	return pins, ps.list
}

// parsePin reads a pin line; why says what is wrong with it.
func parsePin(l string) (p pin, why string) {
	m := pinRE.FindStringSubmatch(l)
	if m == nil {
		switch {
		case strings.Contains(l, "://") || strings.Contains(l, "@"):
			return p, "a URL or direct reference: pip would fetch it from outside the bundle; mkrelease pins NAME==VERSION with hashes"
		case strings.Contains(l, " #"):
			return p, "an inline comment: pip strips it, mkrelease writes none"
		case strings.Contains(l, "${"):
			return p, "a ${VARIABLE}: pip fills it in from the environment"
		case strings.ContainsAny(strings.SplitN(l, ";", 2)[0], "[]"):
			return p, "extras: mkrelease pins every package of the closure itself, without extras"
		case !strings.Contains(l, "=="):
			return p, "not an exact pin: mkrelease writes NAME==VERSION for every wheel"
		case !strings.HasSuffix(l, ` \`):
			return p, "a pin without its hashes on the lines after it: mkrelease writes \"NAME==VERSION \\\" then one --hash line per wheel"
		default:
			return p, "not a pin in the form mkrelease writes (NAME==VERSION [; MARKER] \\, with the normalised name and version)"
		}
	}
	p.name, p.version = m[1], m[2]
	if v, err := pep440.Parse(p.version); err != nil || v.String() != p.version {
		return p, fmt.Sprintf("version %q is not a normalised PEP 440 version", p.version)
	}
	if pyname.Normalize(p.name) != p.name {
		return p, fmt.Sprintf("name %q is not normalised", p.name)
	}
	if m[3] != "" {
		if why := unsafeMarker(m[3]); why != "" {
			return p, why
		}
		mk, err := pep508.ParseMarker(m[3])
		if err != nil {
			return p, fmt.Sprintf("the marker does not parse: %v", err)
		}
		if mk.String() != m[3] {
			return p, fmt.Sprintf("the marker is not in the canonical form mkrelease writes (%q)", mk.String())
		}
		p.marker = mk
	}
	return p, ""
}

// unsafeMarker says why pip might read a marker differently from the
// PEP 508 grammar, or "".
func unsafeMarker(m string) string {
	switch {
	case strings.Contains(m, " -"):
		return "the marker holds \" -\": pip would read the rest of the line as options"
	case strings.Contains(m, "#"):
		return "the marker holds \"#\": pip would strip the rest of the line as a comment"
	case strings.Contains(m, "${"):
		return "the marker holds \"${\": pip would fill it in from the environment"
	case strings.ContainsAny(m, "\\`"):
		return "the marker holds a backslash or backquote, which mkrelease never writes"
	}
	return ""
}

// checkPins ties every pin to the bundle's wheels: each hash is a wheel of
// the bundle with the pin's name and version, no hash or package twice,
// and every wheel pinned.
func checkPins(pins []pin, wheels []bundleWheel, ps *problems) {
	bySHA := map[string]bundleWheel{}
	for _, w := range wheels {
		bySHA[w.sha256] = w
	}
	seenSHA := map[string]int{}
	seenPkg := map[string]int{}
	for _, p := range pins {
		key := p.name + "==" + p.version
		if first, ok := seenPkg[key]; ok {
			ps.add(p.line, "pins %s a second time (first on line %d)", key, first)
		}
		seenPkg[key] = p.line
		for i, h := range p.hashes {
			n := p.hashLines[i]
			if first, ok := seenSHA[h]; ok {
				ps.add(n, "pins sha256:%s a second time (first on line %d)", h, first)
				continue
			}
			seenSHA[h] = n
			w, ok := bySHA[h]
			switch {
			case !ok:
				ps.add(n, "pins sha256:%s, which no wheel of the bundle has: pip would look for it elsewhere", h)
			case w.name != p.name || w.version != p.version:
				ps.add(n, "sha256:%s is %s, a wheel of %s==%s, not of %s", h, w.rel, w.name, w.version, key)
			}
		}
	}
	for _, w := range wheels {
		if _, ok := seenSHA[w.sha256]; !ok {
			ps.list = append(ps.list, problem{file: w.rel, msg: "not pinned in requirements.txt: every wheel of a bundle is one its requirements.txt pins"})
		}
	}
}

// closureOf rebuilds the closure requirements.txt and pylock.toml were
// written from: the pins, with the bundle's wheels as their files (the
// pins are checked against the wheels first).
func closureOf(target deps.Target, pins []pin, wheels []bundleWheel) *deps.Closure {
	bySHA := map[string]bundleWheel{}
	for _, w := range wheels {
		bySHA[w.sha256] = w
	}
	c := &deps.Closure{Target: target}
	for _, p := range pins {
		r := deps.Resolved{Name: p.name, Version: p.version, Marker: p.marker}
		for _, h := range p.hashes {
			w := bySHA[h]
			r.Own = w.own()
			r.Files = append(r.Files, deps.File{Name: w.base(), SHA256: h, Size: w.size})
		}
		slices.SortFunc(r.Files, func(a, b deps.File) int { return strings.Compare(a.Name, b.Name) })
		if r.Own {
			c.Own = append(c.Own, r)
		} else {
			c.Packages = append(c.Packages, r)
		}
	}
	return c
}

// firstDifference finds the first line where got differs from want and
// returns its number and both versions of it (shortened for a message).
func firstDifference(want, got []byte) (line int, w, g string, differ bool) {
	if bytes.Equal(want, got) {
		return 0, "", "", false
	}
	wl := strings.SplitAfter(string(want), "\n")
	gl := strings.SplitAfter(string(got), "\n")
	for i := 0; ; i++ {
		var a, b string
		if i < len(wl) {
			a = wl[i]
		}
		if i < len(gl) {
			b = gl[i]
		}
		if a != b {
			if a == "" {
				a = "(end of file)"
			}
			if b == "" {
				b = "(end of file)"
			}
			return i + 1, shorten(a), shorten(b), true
		}
	}
}

func shorten(s string) string {
	if len(s) > 120 {
		return s[:117] + "..."
	}
	return s
}

// pylock mirrors the pylock.toml mkrelease writes into a bundle; decoding
// refuses any other key (url, sdist, vcs, directory, archive, ...).
type pylock struct {
	LockVersion      string          `toml:"lock-version"`
	Environments     []string        `toml:"environments"`
	RequiresPython   string          `toml:"requires-python"`
	Extras           []string        `toml:"extras"`
	DependencyGroups []string        `toml:"dependency-groups"`
	DefaultGroups    []string        `toml:"default-groups"`
	CreatedBy        string          `toml:"created-by"`
	Packages         []pylockPackage `toml:"packages"`
	Tool             struct {
		Mkrelease struct {
			Target   string   `toml:"target"`
			Platform string   `toml:"platform"`
			Pythons  []string `toml:"pythons"`
		} `toml:"mkrelease"`
	} `toml:"tool"`
}

type pylockPackage struct {
	Name           string `toml:"name"`
	Version        string `toml:"version"`
	Marker         string `toml:"marker"`
	RequiresPython string `toml:"requires-python"`
	Index          string `toml:"index"`
	Dependencies   []struct {
		Name    string `toml:"name"`
		Version string `toml:"version"`
	} `toml:"dependencies"`
	Wheels []struct {
		Name   string            `toml:"name"`
		Path   string            `toml:"path"`
		Size   int64             `toml:"size"`
		Hashes map[string]string `toml:"hashes"`
	} `toml:"wheels"`
}

// indexRE is the form of the informational [[packages]] index URL: the
// wheels themselves always come from their relative path in the bundle.
var indexRE = regexp.MustCompile(`^(https?|file)://[!#-~]+$`)

// checkPylockToml checks a bundle's pylock.toml: every package a pin of
// requirements.txt with the same marker, every wheel entry a wheel of the
// bundle by relative path (wheels/ or dependencies/), size and sha256,
// no URL or source other than those paths, and the text byte for byte what
// mkrelease writes for them. target nil (no usable manifest) skips the
// comparison.
func checkPylockToml(data []byte, target *deps.Target, pins []pin, wheels []bundleWheel) []problem {
	ps := &problems{file: "pylock.toml"}
	lines(data, ps)
	if !ps.ok() {
		return ps.list
	}
	var f pylock
	// The decoder matches keys case-insensitively: a case variant is a key
	// mkrelease does not write, refused before it could be read as another.
	for _, u := range tomlkeys.Check(data, &f) {
		if u.Declared != "" {
			ps.add(u.Line, "key %s spells %q in another case: the decoder would read it as that key; mkrelease writes every key in its own spelling", u.Path, u.Declared)
			return ps.list
		}
	}
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&f); err != nil {
		var strict *toml.StrictMissingError
		var de *toml.DecodeError
		switch {
		case errors.As(err, &strict) && len(strict.Errors) > 0:
			e := &strict.Errors[0]
			row, _ := e.Position()
			key := append([]string{"?"}, e.Key()...)
			ps.add(row, "key %q is not one mkrelease writes (a url, sdist, vcs, directory or archive would name files outside the bundle)", key[len(key)-1])
		case errors.As(err, &de):
			row, _ := de.Position()
			ps.add(row, "not valid TOML: %s", strings.TrimPrefix(de.Error(), "toml: "))
		default:
			ps.add(0, "not valid TOML: %v", err)
		}
		return ps.list
	}
	n := 0
	for _, p := range f.Packages {
		n += len(p.Wheels)
	}
	if len(f.Packages) > len(wheels) || n > len(wheels) {
		ps.add(0, "lists %d packages with %d wheels; the bundle has %d wheels, and each package has at least one", len(f.Packages), n, len(wheels))
		return ps.list
	}
	byRel := map[string]bundleWheel{}
	for _, w := range wheels {
		byRel[w.rel] = w
	}
	byPkg := map[string]pin{}
	for _, p := range pins {
		byPkg[p.name+"=="+p.version] = p
	}
	c := &deps.Closure{}
	if target != nil {
		c.Target = *target
	}
	names := map[string]bool{}
	for _, p := range f.Packages {
		names[p.Name] = true
	}
	seen := map[string]bool{}
	seenPkg := map[string]bool{}
	for _, p := range f.Packages {
		key := p.Name + "==" + p.Version
		at := lineOf(data, fmt.Sprintf("name = %q", p.Name))
		r := deps.Resolved{Name: p.Name, Version: p.Version, RequiresPython: p.RequiresPython, Index: p.Index}
		rp, ok := byPkg[key]
		switch {
		case seenPkg[key]:
			ps.add(at, "package %s is listed twice", key)
		case !ok:
			ps.add(at, "package %s is not pinned in requirements.txt: both locks list the same wheels", key)
		case p.Marker != rp.marker.String():
			ps.addDiff(at, rp.marker.String(), p.Marker, "package %s has marker %q, requirements.txt has %q: both locks say the same", key, p.Marker, rp.marker.String())
		default:
			r.Marker = rp.marker
		}
		seenPkg[key] = true
		if p.Index != "" && !indexRE.MatchString(p.Index) {
			ps.add(at, "package %s: index %q is not an http(s) or file URL", key, p.Index)
		}
		for _, d := range p.Dependencies {
			if !names[d.Name] {
				ps.add(at, "package %s depends on %s, which the lock does not list", key, d.Name)
			}
			r.Requires = append(r.Requires, d.Name)
		}
		if len(p.Wheels) == 0 {
			ps.add(at, "package %s lists no wheel: a bundle installs wheels only", key)
		}
		for _, w := range p.Wheels {
			wl := lineOf(data, fmt.Sprintf("path = %q", w.Path))
			bw, ok := byRel[w.Path]
			switch {
			case w.Path != deps.OwnDir+"/"+w.Name && w.Path != deps.DependencyDir+"/"+w.Name:
				ps.add(wl, "wheel %q has path %q: mkrelease writes wheels/NAME or dependencies/NAME, inside the bundle", w.Name, w.Path)
			case !ok:
				ps.add(wl, "wheel %s is not in the bundle", w.Path)
			case seen[w.Path]:
				ps.add(wl, "wheel %s is listed twice", w.Path)
			case bw.name != p.Name || bw.version != p.Version:
				ps.add(wl, "wheel %s is of %s==%s, not of %s", w.Path, bw.name, bw.version, key)
			case len(w.Hashes) != 1 || w.Hashes["sha256"] != bw.sha256:
				ps.add(wl, "wheel %s: hashes %v, want exactly {sha256 = %q}", w.Path, w.Hashes, bw.sha256)
			case w.Size != bw.size:
				ps.addDiff(wl, strconv.FormatInt(bw.size, 10), strconv.FormatInt(w.Size, 10), "wheel %s: size %d, the file has %d bytes", w.Path, w.Size, bw.size)
			}
			seen[w.Path] = true
			r.Own = strings.HasPrefix(w.Path, deps.OwnDir+"/")
			r.Files = append(r.Files, deps.File{Name: w.Name, SHA256: w.Hashes["sha256"], Size: w.Size})
		}
		if r.Own {
			c.Own = append(c.Own, r)
		} else {
			c.Packages = append(c.Packages, r)
		}
	}
	for _, w := range wheels {
		if !seen[w.rel] {
			ps.list = append(ps.list, problem{file: w.rel, msg: "not listed in pylock.toml: both locks list every wheel of the bundle"})
		}
	}
	if !ps.ok() || target == nil {
		return ps.list
	}
	want := deps.PylockToml(c, nil)
	if n, w, g, differ := firstDifference(want, data); differ {
		ps.addDiff(n, w, g, "differs from what mkrelease writes for this bundle's wheels: want %q, got %q", w, g)
	}
	return ps.list
}

// lineOf returns the number of the first line of data holding s, or 0.
func lineOf(data []byte, s string) int {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0
	}
	return bytes.Count(data[:i], []byte("\n")) + 1
}
