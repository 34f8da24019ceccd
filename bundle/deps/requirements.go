package deps

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
)

// maxLockBytes bounds the size of a lock file read into memory.
const maxLockBytes = 64 << 20

// ReadRequirements reads a requirements file in pip's hash-checking form;
// see [ParseRequirements].
func ReadRequirements(path string) (*Lock, error) {
	data, err := readLockFile(path)
	if err != nil {
		return nil, err
	}
	return ParseRequirements(path, data)
}

func readLockFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("read lock: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, &LockError{File: path, Msg: "not a regular file"}
	}
	if st.Size() > maxLockBytes {
		return nil, &LockError{File: path, Msg: fmt.Sprintf("%d bytes: larger than the %d a lock may have", st.Size(), maxLockBytes)}
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil && st.Size() > 0 {
		return nil, fmt.Errorf("read lock %s: %w", path, err)
	}
	return data, nil
}

// commentRE is pip's comment rule: "#" at the start of a line or after
// white space starts a comment that runs to the end of the line.
var commentRE = regexp.MustCompile(`(^|[ \t]+)#.*$`)

// envVarRE is pip's environment variable reference, ${NAME}.
var envVarRE = regexp.MustCompile(`\$\{[A-Z0-9_]+\}`)

// ParseRequirements parses a requirements file in pip's hash-checking form
// (pip's "Requirements File Format" and "Secure installs"); file names it in
// messages and is the folder nothing is resolved against (requirements
// files carry no paths mkrelease uses).
//
// Lines are read as pip reads them: a line ending in "\" continues on the
// next (unless it holds a comment); "#" at the start of a line or after
// white space starts a comment; blank lines are skipped. Every requirement
// must be "name==version" (optionally with extras, which are ignored, and
// "; marker") followed by at least one --hash=sha256:HEX option; anything
// else is a *LockError naming the line: an unpinned or range requirement,
// a direct reference ("name @ URL"), a requirement without a sha256 hash,
// an editable (-e), a nested file (-r, -c), --no-binary (only wheels are
// bundled), ${VAR} references (they make the lock depend on the
// environment), and unknown options. Options that only say where to look
// or how to choose (--index-url, --extra-index-url, --find-links,
// --no-index, --trusted-host, --pre, --prefer-binary, --only-binary,
// --require-hashes, --use-feature) are ignored and listed in [Lock.Notes]:
// the sources are the [Finder]'s, and hashes are always required. sha384
// and sha512 hashes are accepted and ignored; mkrelease verifies sha256.
func ParseRequirements(file string, data []byte) (*Lock, error) {
	lock := &Lock{File: file, Format: FormatRequirements}
	for _, ll := range logicalLines(string(data)) {
		where := fmt.Sprintf("%s:%d", file, ll.line)
		fail := func(msg, hint string) error {
			return &LockError{File: file, Line: ll.line, Msg: msg, Hint: hint}
		}
		text := ll.text
		if envVarRE.MatchString(text) {
			return nil, fail(fmt.Sprintf("environment variable reference %s", envVarRE.FindString(text)),
				"a lock must not depend on the environment: write the value")
		}
		tokens := strings.Fields(text)
		var args []string
		for len(tokens) > 0 && !strings.HasPrefix(tokens[0], "-") {
			args = append(args, tokens[0])
			tokens = tokens[1:]
		}
		opts, err := parseOptions(tokens)
		if err != nil {
			return nil, fail(err.Error(), "")
		}
		if len(args) == 0 {
			notes, err := globalOptions(opts)
			if err != nil {
				return nil, fail(err.Error(), "")
			}
			for _, n := range notes {
				lock.Notes = append(lock.Notes, Note{Where: where, Msg: n})
			}
			continue
		}
		p, notes, err := requirementLine(strings.Join(args, " "), opts)
		if err != nil {
			var le *LockError
			if errors.As(err, &le) {
				le.File, le.Line = file, ll.line
				return nil, le
			}
			return nil, fail(err.Error(), "")
		}
		p.Where = where
		for _, n := range notes {
			lock.Notes = append(lock.Notes, Note{Where: where, Msg: n})
		}
		lock.Packages = append(lock.Packages, p)
	}
	return lock, nil
}

type logicalLine struct {
	line int // 1-based number of the first physical line
	text string
}

// logicalLines joins continuation lines and strips comments as pip does.
func logicalLines(s string) []logicalLine {
	phys := strings.Split(s, "\n")
	var out []logicalLine
	var cur []string
	start := 0
	emit := func(n int, text string) {
		text = strings.TrimSpace(commentRE.ReplaceAllString(text, ""))
		if text != "" {
			out = append(out, logicalLine{n, text})
		}
	}
	for i, l := range phys {
		l = strings.TrimSuffix(l, "\r")
		isComment := commentRE.MatchString(l)
		if !strings.HasSuffix(l, `\`) || isComment {
			if isComment {
				l = " " + l
			}
			if cur != nil {
				emit(start, strings.Join(append(cur, l), ""))
				cur = nil
			} else {
				emit(i+1, l)
			}
			continue
		}
		if cur == nil {
			start = i + 1
		}
		cur = append(cur, strings.Trim(l, `\`))
	}
	if cur != nil {
		emit(start, strings.Join(cur, ""))
	}
	return out
}

type option struct {
	name  string // as written, e.g. "--hash" or "-f"
	value string
	has   bool // a value was given
}

// takesValue reports whether an option takes an argument.
func takesValue(name string) bool {
	switch name {
	case "--hash", "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host",
		"-r", "--requirement", "-c", "--constraint", "-e", "--editable", "--only-binary", "--no-binary",
		"--use-feature", "--config-settings", "--global-option", "--install-option":
		return true
	}
	return false
}

// parseOptions reads option tokens: "--name=value", "--name value",
// "-xvalue", "-x value", or a flag.
func parseOptions(tokens []string) ([]option, error) {
	var opts []option
	for i := 0; i < len(tokens); i++ {
		t := tokens[i]
		if !strings.HasPrefix(t, "-") {
			return nil, fmt.Errorf("unexpected %q after the options: options go after the requirement, each starting with \"-\"", t)
		}
		var o option
		switch {
		case strings.HasPrefix(t, "--"):
			name, value, has := strings.Cut(t, "=")
			o = option{name: name, value: value, has: has}
		case len(t) > 2:
			o = option{name: t[:2], value: t[2:], has: true}
		default:
			o = option{name: t}
		}
		if takesValue(o.name) && !o.has {
			if i+1 >= len(tokens) {
				return nil, fmt.Errorf("option %s needs a value", o.name)
			}
			i++
			o.value, o.has = tokens[i], true
		}
		opts = append(opts, o)
	}
	return opts, nil
}

// globalOptions judges an options-only line: it returns notes for options
// that are ignored and an error for the ones that cannot be honoured.
func globalOptions(opts []option) ([]string, error) {
	var notes []string
	for _, o := range opts {
		switch o.name {
		case "-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--no-index", "--trusted-host":
			notes = append(notes, fmt.Sprintf("%s ignored: the sources are configured for mkrelease ([dependencies] find-links and index), not in the lock", o.name))
		case "--require-hashes":
			notes = append(notes, "--require-hashes ignored: mkrelease always requires hashes")
		case "--only-binary", "--prefer-binary":
			notes = append(notes, o.name+" ignored: mkrelease only ever uses wheels")
		case "--pre":
			notes = append(notes, "--pre ignored: locked versions are used as pinned, pre-releases included")
		case "--use-feature":
			notes = append(notes, "--use-feature ignored: it changes nothing mkrelease does")
		case "-r", "--requirement", "-c", "--constraint":
			return nil, fmt.Errorf("%s %s: nested requirement or constraint files are not read (every pin must be in the one lock file): merge the file in", o.name, o.value)
		case "-e", "--editable":
			return nil, fmt.Errorf("%s %s: an editable install is not a locked wheel: pin a released version with == and --hash", o.name, o.value)
		case "--no-binary":
			return nil, fmt.Errorf("--no-binary %s: sdists are not installed from a bundle: lock wheels", o.value)
		case "--hash":
			return nil, fmt.Errorf("--hash on a line without a requirement: put it on the requirement's line (continue lines with \\)")
		default:
			return nil, fmt.Errorf("unknown option %s", o.name)
		}
	}
	return notes, nil
}

// requirementLine parses "name==version ; marker" and its options.
func requirementLine(spec string, opts []option) (Locked, []string, error) {
	var notes []string
	r, err := pep508.ParseRequirement(spec)
	if err != nil {
		return Locked{}, nil, fmt.Errorf("%v", err)
	}
	if r.URL != "" {
		return Locked{}, nil, &LockError{Msg: fmt.Sprintf("%s is a direct reference", spec),
			Hint: "hash-checking locks pin released versions: write " + r.Name + "==VERSION --hash=sha256:..."}
	}
	pinned := r.Specifier.String()
	v, ok := strings.CutPrefix(pinned, "==")
	if !ok || strings.HasPrefix(v, "=") || strings.Contains(v, ",") || strings.HasSuffix(v, ".*") {
		what := "no version"
		if pinned != "" {
			what = fmt.Sprintf("version %q", pinned)
		}
		return Locked{}, nil, &LockError{Msg: fmt.Sprintf("%s is not pinned (%s)", r.Name, what),
			Hint: "every requirement of a lock must be pinned with ==VERSION, e.g. from `pip freeze` or `pip-compile --generate-hashes`"}
	}
	ver, err := pep440.Parse(v)
	if err != nil {
		return Locked{}, nil, err
	}
	p := Locked{Name: r.NormalizedName(), Version: ver.String(), Marker: r.Marker}
	seen := map[string]bool{}
	otherHashes := 0
	for _, o := range opts {
		switch o.name {
		case "--hash":
			alg, digest, ok := strings.Cut(o.value, ":")
			switch {
			case !ok:
				return Locked{}, nil, &LockError{Msg: fmt.Sprintf("--hash=%s: want ALGORITHM:HEX", o.value), Hint: "e.g. --hash=sha256:<64 hex digits>"}
			case alg == "sha256":
				if !isHexDigest(digest) {
					return Locked{}, nil, &LockError{Msg: fmt.Sprintf("--hash=%s: a sha256 digest is 64 hex digits", o.value)}
				}
				d := strings.ToLower(digest)
				if !seen[d] {
					seen[d] = true
					p.Wheels = append(p.Wheels, LockedFile{SHA256: d})
				}
			case alg == "sha384" || alg == "sha512":
				otherHashes++
			default:
				return Locked{}, nil, &LockError{Msg: fmt.Sprintf("--hash=%s: unknown algorithm %q", o.value, alg), Hint: "use sha256"}
			}
		case "--config-settings", "--global-option", "--install-option":
			notes = append(notes, o.name+" ignored: it only matters when building from source, and bundles hold wheels")
		default:
			return Locked{}, nil, &LockError{Msg: fmt.Sprintf("option %s is not allowed on a requirement line", o.name), Hint: "a requirement line takes --hash options only"}
		}
	}
	if len(p.Wheels) == 0 {
		msg := fmt.Sprintf("%s has no --hash=sha256:", spec)
		if otherHashes > 0 {
			msg = fmt.Sprintf("%s has only sha384/sha512 hashes; mkrelease verifies sha256", spec)
		}
		return Locked{}, nil, &LockError{Msg: msg, Hint: "add --hash=sha256:<digest of each allowed wheel> (pip hash, or pip-compile --generate-hashes)"}
	}
	if otherHashes > 0 {
		notes = append(notes, fmt.Sprintf("%d sha384/sha512 hashes ignored: mkrelease verifies the sha256 ones", otherHashes))
	}
	return p, notes, nil
}

// absLockPath makes a path from a lock absolute against the lock's folder.
func absLockPath(lockFile, p string) string {
	p = filepath.FromSlash(p)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(filepath.Dir(lockFile), p)
}
