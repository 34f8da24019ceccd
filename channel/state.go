package channel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/fsmode"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// Names of the files and folders of a channel (see the package doc).
const (
	// StateFile is the machine-readable state, [State] as JSON.
	StateFile = "channel.json"
	// IndexFile is the page for people at the channel's root.
	IndexFile = "index.html"
	// FindLinksFile is the page linking every wheel, for pip --find-links.
	FindLinksFile = "find-links.html"
	// SimpleDir holds the PEP 503 index: SimpleDir/index.html and
	// SimpleDir/PROJECT/index.html.
	SimpleDir = "simple"
	// ReleasesDir holds one folder per published version.
	ReleasesDir = "releases"
	// MetadataSuffix is appended to a wheel's name to name its PEP 658
	// core metadata file.
	MetadataSuffix = ".metadata"
	// StateFormat is the value of State.Format this package writes and
	// reads.
	StateFormat = "mkrelease-channel/2"
	// SignedStateFile is channel.json's signed statement: a DSSE envelope
	// of an in-toto statement whose one subject is channel.json (see the
	// package doc).
	SignedStateFile = dist.ChannelStatementFile
	// StatePredicateType is the predicate type of the signed statement.
	StatePredicateType = "https://mkrelease.dev/attestations/channel-state/v1"
)

// legacyStateFormat is the format of channels made before channel.json
// was signed.
const legacyStateFormat = "mkrelease-channel/1"

// State is what a channel holds, as recorded in its channel.json.
type State struct {
	// Format is StateFormat.
	Format string `json:"format"`
	// Project is the normalised (PEP 503) name of the project the channel
	// serves; "" for an empty channel.
	Project string `json:"project"`
	// Generation is the number of the generation DEST shows; 0 for an
	// empty channel. Each publish makes the next number: a channel never
	// shows a lower one than it showed before.
	Generation int `json:"generation"`
	// Published is when the generation was made, RFC 3339 in UTC to the
	// second ("" for an empty channel).
	Published string `json:"published"`
	// Newest is the highest published version (PEP 440); "" when none.
	Newest string `json:"newest"`
	// Versions are the published versions, ascending by PEP 440.
	Versions []Version `json:"versions"`
}

// Version is one published version.
type Version struct {
	// Version is the normalised PEP 440 version; the folder
	// releases/VERSION holds its assets.
	Version string `json:"version"`
	// Assets are every file published for the version, sorted by name.
	Assets []Asset `json:"assets"`
	// Wheels describe the assets that are wheels, sorted by file name.
	Wheels []Wheel `json:"wheels"`
}

// Asset is one published file.
type Asset struct {
	// Name is the file's base name.
	Name string `json:"name"`
	// SHA256 is its digest in lower-case hex.
	SHA256 string `json:"sha256"`
	// Size is its size in bytes.
	Size int64 `json:"size"`
}

// Wheel is what the index pages say about a published wheel.
type Wheel struct {
	// File is the wheel's asset name.
	File string `json:"file"`
	// Project is the normalised distribution name from the file name:
	// the wheel is listed on simple/PROJECT/.
	Project string `json:"project"`
	// RequiresPython is METADATA's Requires-Python, as written; "" when
	// absent.
	RequiresPython string `json:"requires_python,omitempty"`
	// MetadataSHA256 and MetadataSize describe FILE.metadata, the bytes
	// of the wheel's .dist-info/METADATA.
	MetadataSHA256 string `json:"metadata_sha256"`
	MetadataSize   int64  `json:"metadata_size"`
}

// clone returns a deep copy of s.
func (s State) clone() State {
	out := s
	out.Versions = make([]Version, len(s.Versions))
	for i, v := range s.Versions {
		out.Versions[i] = Version{Version: v.Version, Assets: slices.Clone(v.Assets), Wheels: slices.Clone(v.Wheels)}
	}
	return out
}

// Lookup returns the published version equal (PEP 440) to v.
func (s State) Lookup(v string) (Version, bool) {
	pv, err := pep440.Parse(v)
	if err != nil {
		return Version{}, false
	}
	for _, p := range s.Versions {
		if q, err := pep440.Parse(p.Version); err == nil && q.Compare(pv) == 0 {
			return p, true
		}
	}
	return Version{}, false
}

// marshal renders s as channel.json.
func (s State) marshal() ([]byte, error) {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// problems lists what is wrong with s as channel.json of generation gen
// (0: any generation); nil when nothing is.
func (s State) problems(gen int) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	switch s.Format {
	case StateFormat:
	case legacyStateFormat:
		add("format is %q, written by an earlier mkrelease that did not sign channel.json; its generations cannot be told apart from a rollback: publish every version again into a new channel", s.Format)
	default:
		add("format is %q, want %q", s.Format, StateFormat)
	}
	if gen != 0 && s.Generation != gen {
		add("generation is %d but DEST shows generation %d", s.Generation, gen)
	}
	if _, err := parsePublished(s.Published); err != nil {
		add("published %q: %v", s.Published, err)
	}
	if s.Project == "" || pyname.Valid(s.Project) != nil || pyname.Normalize(s.Project) != s.Project {
		add("project %q is not a normalised project name", s.Project)
	}
	var prev pep440.Version
	for i, v := range s.Versions {
		pv, err := pep440.Parse(v.Version)
		switch {
		case err != nil:
			add("version %q: %v", v.Version, err)
			continue
		case pv.String() != v.Version:
			add("version %q is not normalised (%s)", v.Version, pv)
		case i > 0 && prev.Compare(pv) >= 0:
			add("version %s is not above %s: versions must be ascending and distinct", v.Version, prev)
		}
		prev = pv
		out = append(out, v.problems()...)
	}
	newest := ""
	if n := len(s.Versions); n > 0 {
		newest = s.Versions[n-1].Version
	}
	if s.Newest != newest {
		add("newest is %q but the highest version listed is %q", s.Newest, newest)
	}
	return out
}

// problems lists what is wrong with one version's record.
func (v Version) problems() []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, fmt.Sprintf("version %s: ", v.Version)+fmt.Sprintf(format, args...))
	}
	if len(v.Assets) == 0 {
		add("no assets")
	}
	assets := map[string]bool{}
	for i, a := range v.Assets {
		if err := checkAssetName(a.Name); err != nil {
			add("asset %q: %v", a.Name, err)
		}
		if i > 0 && v.Assets[i-1].Name >= a.Name {
			add("assets are not sorted by name or %q is listed twice", a.Name)
		}
		if !checksum.IsSHA256(a.SHA256) {
			add("asset %s: sha256 %q is not 64 lower-case hex digits", a.Name, a.SHA256)
		}
		if a.Size < 0 {
			add("asset %s: negative size", a.Name)
		}
		assets[a.Name] = true
	}
	for i, w := range v.Wheels {
		if !assets[w.File] {
			add("wheel %s is not among the assets", w.File)
		}
		if assets[w.File+MetadataSuffix] {
			add("asset %s has the name of wheel %s's metadata file", w.File+MetadataSuffix, w.File)
		}
		if i > 0 && v.Wheels[i-1].File >= w.File {
			add("wheels are not sorted by file or %q is listed twice", w.File)
		}
		fn, err := wheel.ParseFilename(w.File)
		if err != nil {
			add("wheel %s: %v", w.File, err)
		} else if pyname.Normalize(fn.Distribution) != w.Project {
			add("wheel %s: project is %q, the file name says %q", w.File, w.Project, pyname.Normalize(fn.Distribution))
		}
		if !checksum.IsSHA256(w.MetadataSHA256) {
			add("wheel %s: metadata_sha256 %q is not 64 lower-case hex digits", w.File, w.MetadataSHA256)
		}
	}
	for name := range assets {
		if dist.ClaimsWheel(name) && !slices.ContainsFunc(v.Wheels, func(w Wheel) bool { return w.File == name }) {
			add("asset %s is a wheel missing from wheels", name)
		}
	}
	return out
}

// publishedLayout is how State.Published is written.
const publishedLayout = "2006-01-02T15:04:05Z"

// formatPublished renders t as State.Published.
func formatPublished(t time.Time) string { return t.UTC().Format(publishedLayout) }

// parsePublished parses State.Published, which must be written as
// formatPublished writes it.
func parsePublished(s string) (time.Time, error) {
	t, err := time.Parse(publishedLayout, s)
	if err != nil || formatPublished(t) != s {
		return time.Time{}, fmt.Errorf("not a time in UTC written as %s", publishedLayout)
	}
	return t, nil
}

// checkAssetName says why name cannot be the name of an asset: it must be
// a base name a checksum file can list, not starting with ".".
func checkAssetName(name string) error {
	if err := checksum.CheckName(name); err != nil {
		return err
	}
	if strings.Contains(name, "/") {
		return errors.New("an asset is named by its base name, without folders")
	}
	if strings.HasPrefix(name, ".") {
		return errors.New("names starting with \".\" are reserved for temporary files")
	}
	return nil
}

// paths are the places a channel at dest uses.
type paths struct {
	dest    string // absolute DEST
	parent  string // its folder
	gens    string // PARENT/.DEST.generations
	lock    string // PARENT/.DEST.lock
	tmpLink string // PARENT/.DEST.link-tmp
}

func newPaths(dest string) (paths, error) {
	if strings.Contains(dest, "://") {
		u, err := url.Parse(dest)
		if err != nil {
			return paths{}, &UsageError{Msg: fmt.Sprintf("channel %s: %v", dest, err)}
		}
		if u.Scheme != "file" || (u.Host != "" && u.Host != "localhost") || u.RawQuery != "" || u.Fragment != "" {
			return paths{}, &UsageError{Msg: fmt.Sprintf("channel %s: only a folder or a file:///path URL can be published to; publish to a folder and serve it", dest)}
		}
		dest = u.Path
	}
	if dest == "" {
		return paths{}, &UsageError{Msg: "channel: no destination given"}
	}
	abs, err := filepath.Abs(dest)
	if err != nil {
		return paths{}, &UsageError{Msg: fmt.Sprintf("channel %s: %v", dest, err)}
	}
	parent, base := filepath.Dir(abs), filepath.Base(abs)
	if base == "/" || base == "." {
		return paths{}, &UsageError{Msg: fmt.Sprintf("channel %s: the file system root cannot be a channel", dest)}
	}
	return paths{
		dest:    abs,
		parent:  parent,
		gens:    filepath.Join(parent, "."+base+".generations"),
		lock:    filepath.Join(parent, "."+base+".lock"),
		tmpLink: filepath.Join(parent, "."+base+".link-tmp"),
	}, nil
}

// genName names generation n.
func genName(n int) string { return fmt.Sprintf("g-%06d", n) }

// parseGenName returns the number of a generation folder name, or 0.
func parseGenName(name string) int {
	digits, ok := strings.CutPrefix(name, "g-")
	if !ok || len(digits) < 6 || strings.TrimLeft(digits, "0123456789") != "" {
		return 0
	}
	n, err := strconv.Atoi(digits)
	if err != nil || genName(n) != name {
		return 0
	}
	return n
}

// linkTarget is what DEST links to for generation n (relative to PARENT).
func (p paths) linkTarget(n int) string {
	return filepath.Base(p.gens) + "/" + genName(n)
}

// destKind is what DEST is.
type destKind int

const (
	destMissing  destKind = iota // nothing: an empty channel
	destEmptyDir                 // an empty real folder: an empty channel, replaced at the first publish
	destLink                     // a link to a generation
)

// Channel is the state of a channel at the moment it was opened.
type Channel struct {
	paths paths
	kind  destKind
	state State
	// stateData are the bytes of channel.json and root the generation's
	// folder (nil and "" for an empty channel).
	stateData []byte
	root      string
}

// Open reads the channel at dest (a folder path or a file:// URL). A missing
// DEST, or an empty folder, is an empty channel. A DEST that is not a
// channel made by mkrelease (a non-empty real folder, a file, a link to
// anything but one of its generations) is a *RefusedError with
// RuleNotChannel saying why; a generation whose channel.json is missing or
// invalid is one too. Open takes no lock: generations never change, so
// what it reads is one consistent state.
func Open(dest string) (*Channel, error) {
	p, err := newPaths(dest)
	if err != nil {
		return nil, err
	}
	c := &Channel{paths: p, state: State{Format: StateFormat, Versions: []Version{}}}
	fi, err := os.Lstat(p.dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return c, nil
	case err != nil:
		return nil, fmt.Errorf("channel %s: %w", p.dest, err)
	case fi.IsDir():
		entries, err := os.ReadDir(p.dest)
		if err != nil {
			return nil, fmt.Errorf("channel %s: %w", p.dest, err)
		}
		if len(entries) == 0 {
			c.kind = destEmptyDir
			return c, nil
		}
		why := "it is a non-empty folder, not a link to a generation made by mkrelease publish"
		if _, err := os.Stat(filepath.Join(p.dest, StateFile)); err == nil {
			why = "it is a real folder holding a channel (a copy?); mkrelease can only update a channel that is a link to its generations"
		}
		return nil, notChannel(p.dest, why+"; move it away or publish elsewhere")
	case fi.Mode()&fs.ModeSymlink == 0:
		return nil, notChannel(p.dest, "it is a "+fsmode.Name(fi.Mode())+", not a link to a generation made by mkrelease publish")
	}
	n, err := p.current()
	if err != nil {
		return nil, err
	}
	root := filepath.Join(p.gens, genName(n))
	st, data, err := readState(root, n)
	if err != nil {
		return nil, notChannel(p.dest, err.Error()+"; run mkrelease verify on it")
	}
	c.kind, c.state, c.stateData, c.root = destLink, *st, data, root
	return c, nil
}

// current returns the generation the link DEST points to.
func (p paths) current() (int, error) {
	target, err := os.Readlink(p.dest)
	if err != nil {
		return 0, fmt.Errorf("channel %s: %w", p.dest, err)
	}
	dir, name := filepath.Split(target)
	n := parseGenName(name)
	if n == 0 || filepath.Clean(dir) != filepath.Base(p.gens) {
		return 0, notChannel(p.dest, fmt.Sprintf("it links to %q, not to %s/g-NNNNNN", target, filepath.Base(p.gens)))
	}
	return n, nil
}

// readState reads and checks channel.json of generation n in root, and
// returns it with its bytes.
func readState(root string, n int) (*State, []byte, error) {
	file := filepath.Join(root, StateFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	st, err := parseState(data)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", file, err)
	}
	if probs := st.problems(n); len(probs) > 0 {
		return nil, nil, fmt.Errorf("%s: %s", file, strings.Join(probs, "; "))
	}
	return st, data, nil
}

// parseState decodes channel.json strictly: no unknown field, one value.
func parseState(data []byte) (*State, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var st State
	if err := dec.Decode(&st); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	if st.Versions == nil {
		st.Versions = []Version{}
	}
	return &st, nil
}

// Dest is the channel's absolute path.
func (c *Channel) Dest() string { return c.paths.dest }

// State returns a copy of the channel's state.
func (c *Channel) State() State { return c.state.clone() }
