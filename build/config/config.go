// Package config loads and validates release.toml, the one checked-in file
// that declares a release: the project, its pinned sources and overlays, the
// toolchains it is locked against, its targets and its build steps.
//
// Loading is strict. A syntax error, an unknown key, a value of the wrong
// type and every semantic problem (an invalid PEP 440 version or project
// name, a source with two kinds, an overlay naming an unknown source, a path
// leaving the project folder, ...) is reported as an [*Error] carrying the
// file, line and column and a hint; all problems found are returned at once
// as an [ErrorList]. Such errors map to exit status 2.
//
// Keys are case-sensitive and compared exactly ([CheckKeys]). Every string
// is checked for the characters its field may hold ([TextClass]) before
// anything else reads it: a NUL, a carriage return, a bidi override or a
// zero-width space in a name, path, command or METADATA field is refused
// with its position, the key and the character.
//
// Paths in release.toml are slash-separated, relative to the folder holding
// release.toml, and may not leave it. The project name and version are
// normalised (PEP 503, PEP 440) on load; every later stage uses the
// normalised forms.
package config

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/pin"
)

// DefaultFile is the configuration file name looked up when none is given.
const DefaultFile = "release.toml"

// Config is a loaded, validated release.toml.
type Config struct {
	Project    Project     `toml:"project"`
	Build      Build       `toml:"build"`
	Sources    []Source    `toml:"source"`
	Overlays   []Overlay   `toml:"overlay"`
	Toolchains []Toolchain `toml:"toolchain"`
	Targets    []Target    `toml:"target"`
	Wheels     []Wheel     `toml:"wheel"`
	// Dependencies says where the wheels' third-party runtime dependencies
	// come from.
	Dependencies Dependencies `toml:"dependencies"`
	// Bundle configures the offline install bundles.
	Bundle Bundle `toml:"bundle"`
	// Signing names the key that signs the provenance and the keys an
	// auditor trusts.
	Signing Signing `toml:"signing"`
	// Evidence declares the verifier lanes run against the built wheels.
	Evidence Evidence `toml:"evidence"`
	// Policy configures the publish gate: extra policy files and the
	// thresholds of the default policies.
	Policy Policy `toml:"policy"`
	// Publish says where releases are published.
	Publish Publish `toml:"publish"`
	// Cache configures the shared remote action cache.
	Cache Cache `toml:"cache"`

	// File is the path of release.toml as the user named it (for messages).
	File string `toml:"-"`
	// Dir is the absolute folder holding release.toml; paths resolve against it.
	Dir string `toml:"-"`
	// SHA256 is the hex digest of the release.toml bytes as loaded.
	SHA256 string `toml:"-"`
	// MetadataFiles are the pyproject.toml files that [project] from and
	// [[wheel]] from name, as loaded, in the order first read. They are
	// inputs of the release as release.toml is.
	MetadataFiles []FileDigest `toml:"-"`

	// pos locates every key of the document, for [Config.Errorf].
	pos positions
	// origins place the values a pyproject.toml supplied (see [locate]).
	origins map[string]origin
}

// Project describes what is released.
type Project struct {
	// From names a pyproject.toml (project-relative) whose PEP 621
	// [project] table supplies the fields not written here, and those of
	// the [[wheel]] of its name; a value written in both must be the same.
	From string `toml:"from"`
	// Name is the release name as written; NormalizedName is its PEP 503 form.
	Name string `toml:"name"`
	// Version is the PEP 440 version, normalised on load.
	Version string `toml:"version"`
	// Summary is a one-line description.
	Summary string `toml:"summary" text:"prose"`
	// License is an SPDX license expression.
	License string `toml:"license"`
	// Readme is the path of the long description.
	Readme string `toml:"readme"`
	// ReadmeText is the long description when a pyproject.toml gives it
	// inline (readme = { text = ... }); ReadmeType is the content type a
	// pyproject.toml's readme table gives (by default it follows the
	// readme's extension).
	ReadmeText string `toml:"-"`
	ReadmeType string `toml:"-"`
	// URLs maps labels (Homepage, Source, ...) to URLs.
	URLs map[string]string `toml:"urls"`
	// Authors are the people or organisations who make the release (core
	// metadata Author/Author-email).
	Authors []Person `toml:"authors"`
	// Maintainers are those who maintain the release when they are not
	// the authors (core metadata Maintainer/Maintainer-email).
	Maintainers []Person `toml:"maintainers"`
	// Supplier is the SBOM's supplier of the release, in SPDX form:
	// "Organization: NAME (EMAIL)" or "Person: NAME (EMAIL)". By default the
	// first author, as a Person: core metadata does not say whether an
	// author is a person or an organisation, so a team, company or project
	// sets Supplier (mkrelease does not guess it from the name).
	Supplier string `toml:"supplier" text:"prose"`
	// MetadataVersion of the wheels' core metadata: "2.4" (default, with
	// License-Expression) or "2.2" for older uploaders and checkers.
	MetadataVersion string `toml:"metadata_version"`

	// NormalizedName is the PEP 503 normalised Name.
	NormalizedName string `toml:"-"`
}

// Dependencies locate the dependency closure: a lock with hashes, and
// where its files are found.
type Dependencies struct {
	// Lock is a pylock.toml (PEP 751) or a pip requirements file in
	// hash-checking mode, project-relative.
	Lock string `toml:"lock"`
	// FindLinks are folders (project-relative) or URLs holding wheels.
	FindLinks []string `toml:"find_links"`
	// Index is a PEP 503/691 simple index URL (http, https or file).
	Index string `toml:"index"`
}

// Bundle configures the offline install bundle of each target.
type Bundle struct {
	// Changelog is the project's changelog (Markdown); the section for the
	// release version becomes RELEASE_NOTES.md.
	Changelog string `toml:"changelog"`
	// Pythons are the CPython versions ("3.11") the bundles support: the
	// support boundary, stated in INSTALL.md, checked by install.sh, and
	// the interpreters the dependency closure is evaluated for.
	Pythons []string `toml:"pythons"`
}

// Signing configures the provenance signature.
type Signing struct {
	// Key is the signing key URI: file://PATH (an encrypted PEM, password
	// from MKRELEASE_KEY_PASSWORD or a prompt), env://VAR, or a KMS URI of
	// a provider compiled in. Empty: a local development key in .mkrelease/,
	// created on first use (it proves nothing to anyone else).
	Key string `toml:"key"`
	// TrustedKeys are PEM public keys (project-relative paths) that
	// `mkrelease verify` accepts signatures from, besides --key.
	TrustedKeys []string `toml:"trusted_keys"`
}

// Evidence configures `mkrelease evidence run`.
type Evidence struct {
	// Verifier is the project folder of the verifier's sources; lanes see
	// it as ${VERIFIER}, and its tree hash is part of the run identity.
	Verifier string `toml:"verifier"`
	// RecordEnv names environment variables whose (sanitised) values are
	// recorded in the run identity.
	RecordEnv []string `toml:"record_env"`
	Lanes     []Lane   `toml:"lane"`
}

// Policy configures the publish gate. Unset thresholds take
// the defaults of package policies.
type Policy struct {
	// Files are further Rego v1 policy files evaluated with the defaults.
	Files []string `toml:"files"`
	// MinThroughputGeomean is the overall throughput geometric mean the
	// candidate must exceed (strictly).
	MinThroughputGeomean *float64 `toml:"min_throughput_geomean"`
	// MinOverall, MinPhase and MinWorkload are the floors of the overall
	// geometric mean, of every phase's, and of every workload's r.
	MinOverall  *float64 `toml:"min_overall"`
	MinPhase    *float64 `toml:"min_phase"`
	MinWorkload *float64 `toml:"min_workload"`
	// MaxRobustCV bounds every worker's robust CV (a fraction: 0.10 is 10 %).
	MaxRobustCV *float64 `toml:"max_robust_cv"`
}

// Publish says where `mkrelease publish` puts releases.
type Publish struct {
	// To is the channel: a folder (relative to release.toml) or a file://
	// URL.
	To string `toml:"to"`
}

// Cache configures the remote action cache shared by builds on several
// machines (package remotecache). Credentials never go here: Remote may not
// hold user:password@, and a token comes from the environment variable
// RemoteTokenEnv names, or basic authentication from a netrc file ($NETRC,
// else ~/.netrc) entry of the URL's host.
type Cache struct {
	// Remote is the cache's base URL, http:// or https://, speaking the
	// Bazel HTTP remote cache protocol (/ac/ and /cas/ below it). Empty: no
	// remote cache (--remote-cache sets one for a run).
	Remote string `toml:"remote"`
	// RemoteTokenEnv names an environment variable whose value is sent as
	// a bearer token.
	RemoteTokenEnv string `toml:"remote_token_env"`
	// RemoteTimeout bounds each request to the remote cache (default 60s).
	RemoteTimeout Duration `toml:"remote_timeout"`
	// RemoteUpload, when false, only reads the remote cache (default
	// true; --remote-cache-upload overrides it).
	RemoteUpload *bool `toml:"remote_upload"`
	// RemoteMaxSize is the most bytes an action's outputs may declare, in
	// all, for its entry to be taken from the remote cache (default
	// [DefaultRemoteMaxSize]): a record declaring more is skipped, with a
	// warning, before any of its files is downloaded, and the action runs
	// here. No download reads more than its record declares either way.
	RemoteMaxSize int64 `toml:"remote_max_size"`
	// TrustedWriters are PEM public keys (project-relative paths) of the
	// machines whose uploads to the remote cache this project trusts: a
	// record of the remote cache is taken only when one of them signed it
	// (every build signs what it uploads with its signing key, [signing]
	// key or the development key). A record no trusted writer signed is
	// ignored, with a warning, and the action runs here; with none
	// listed, nothing is taken from the remote cache.
	TrustedWriters []string `toml:"trusted_writers"`
	// RemoteMode is how records of the remote cache count: "trust" (the
	// default) serves those a trusted writer signed; "verify" serves
	// none, runs every action the local cache lacks, and compares the
	// remote cache's records of it with what it made, warning loudly,
	// naming the writer, about one that differs (--remote-cache-verify
	// sets it for a run).
	RemoteMode string `toml:"remote_mode"`
}

// Modes of the remote cache ([Cache] RemoteMode).
const (
	RemoteModeTrust  = "trust"
	RemoteModeVerify = "verify"
)

// DefaultRemoteMaxSize bounds what one action's entry may bring from the
// remote cache when [cache] sets no remote_max_size: 2 GiB, more than any
// one step's outputs should be, and less than fills a small cache disk.
const DefaultRemoteMaxSize = 2 << 30

// RemoteMaxBytes is RemoteMaxSize, or its default when it is not set.
func (c Cache) RemoteMaxBytes() int64 {
	if c.RemoteMaxSize > 0 {
		return c.RemoteMaxSize
	}
	return DefaultRemoteMaxSize
}

// Lane kinds.
const (
	LaneCases     = "cases"
	LaneCrossover = "crossover"
)

// Lane is one verifier lane. A cases lane runs Run, which writes one JSON
// line per case to $MKRELEASE_CASES. A crossover lane runs, for each
// workload, four fresh workers in the order candidate, reference,
// reference, candidate; each reports Steps step times and the digest of
// its result.
type Lane struct {
	Name string `toml:"name"`
	Kind string `toml:"kind"`
	// Run is a cases lane's command; ${PYTHON} is the virtualenv's python,
	// ${VERIFIER} the verifier folder.
	Run []string `toml:"run" text:"command"`
	// Env is given to the lane's commands.
	Env map[string]string `toml:"env" text:"command"`
	// Network gives the lane's commands the host's network (default
	// false). Lanes run sandboxed where the host allows it: without
	// network a lane has a loopback of its own and nothing else, the
	// host's loopback included; with it, it shares the host's network
	// namespace, and so reaches what listens on the host's 127.0.0.1 and
	// its abstract Unix sockets too (the rest of the sandbox holds). Only
	// a lane that must download or talk to a server needs it; the
	// evidence's run identity records which lanes had it.
	Network bool `toml:"network"`
	// Timeout bounds the whole cases lane, or one worker (default 10m).
	Timeout Duration `toml:"timeout"`
	// CaseTimeout bounds the time between two cases of a cases lane
	// (default 2m): a lane that stops reporting is stopped.
	CaseTimeout Duration `toml:"case_timeout"`
	// LaneTimeout bounds the whole of a crossover lane, every workload's
	// workers together (default [DefaultLaneTimeout]): a lane still
	// running then is stopped, and the run refuses to write evidence.
	LaneTimeout Duration `toml:"lane_timeout"`
	// Candidate and Reference are a crossover lane's worker commands
	// (${WORKLOAD} is the workload's name), with their own environments.
	Candidate    []string          `toml:"candidate" text:"command"`
	Reference    []string          `toml:"reference" text:"command"`
	CandidateEnv map[string]string `toml:"candidate_env" text:"command"`
	ReferenceEnv map[string]string `toml:"reference_env" text:"command"`
	// MaxHostLoad is how busy a crossover lane's host may be while its
	// workers run: the most runnable tasks per CPU beyond the lane's own,
	// their median over 10 s, before the lane stops with
	// [evidence.host_too_busy] (package hostload; steal time above 10 %
	// stops it too). Unset, [DefaultMaxHostLoad]; 0 turns the watch off,
	// steal time's too: for a lane whose timings are synthetic, or a
	// machine whose load its user judges otherwise. Read it with
	// [Lane.HostLoadLimit].
	MaxHostLoad *float64 `toml:"max_host_load"`
	// Steps per worker (default 16) and warm-ups dropped (default 3; 0:
	// none, a value written in release.toml is kept).
	Steps   int `toml:"steps"`
	Warmups int `toml:"warmups"`
	// Workloads of a crossover lane.
	Workloads []Workload `toml:"workload"`
}

// DefaultLaneTimeout bounds a crossover lane whose [[evidence.lane]] sets
// no lane_timeout: about six times the 4 to 5 minutes the example
// project's throughput lane (11 workloads, 44 workers) takes on an idle
// 2-CPU machine, and far less than its 44 workers could run into their
// own timeouts one by one (10 minutes each).
const DefaultLaneTimeout = 30 * time.Minute

// DefaultMaxHostLoad is a crossover lane's max_host_load when its
// [[evidence.lane]] sets none: 2 runnable tasks per CPU beyond the lane's
// own, the limit of package hostload's DefaultPolicy (its doc comment
// gives the reasoning).
const DefaultMaxHostLoad = 2.0

// HostLoadLimit is the lane's max_host_load, or [DefaultMaxHostLoad] when
// it sets none; 0 means the host's load is not watched.
func (l Lane) HostLoadLimit() float64 {
	if l.MaxHostLoad != nil {
		return *l.MaxHostLoad
	}
	return DefaultMaxHostLoad
}

// Workload is one crossover workload and the phase it is counted in.
type Workload struct {
	Name  string `toml:"name" json:"name"`
	Phase string `toml:"phase" json:"phase"`
}

// Person is an author or maintainer.
type Person struct {
	Name  string `toml:"name" text:"prose"`
	Email string `toml:"email"`
}

// Build holds the settings shared by every build step.
type Build struct {
	// SourceDateEpoch fixes every timestamp of the release (seconds since
	// 1970, at least 1980-01-01 so zip dates stay valid). When absent, the
	// commit time of the first git source is used.
	SourceDateEpoch *int64 `toml:"source_date_epoch"`
	// PassEnv names host environment variables that build steps may see in
	// addition to the fixed allowlist. They become inputs of every action.
	PassEnv []string `toml:"pass_env"`
	// AllowUnsandboxed lets `mkrelease publish` release a build whose
	// steps ran without a sandbox; the default policy refuses it otherwise.
	AllowUnsandboxed bool `toml:"allow_unsandboxed"`
	// RequireCurrent refuses to build from a source read from a git work
	// tree on this machine whose HEAD has moved away from the pinned
	// commit, or whose tree holds changes no commit holds; when false
	// each is a warning. Unset, `release` refuses and `build` and `check`
	// warn ([Build.Current]).
	RequireCurrent *bool `toml:"require_current"`
	// Steps run in order for every target they apply to.
	Steps []Step `toml:"step"`
}

// Current reports whether a stale work tree is refused: RequireCurrent
// when set, else release (true for `mkrelease release`, false for build
// and check).
func (b Build) Current(release bool) bool {
	if b.RequireCurrent != nil {
		return *b.RequireCurrent
	}
	return release
}

// SourceKind says where a source comes from.
type SourceKind string

// The source kinds, by their [pin.Kind] names.
const (
	SourceLocal   SourceKind = pin.LocalName
	SourceGit     SourceKind = pin.GitName
	SourceArchive SourceKind = pin.ArchiveName
)

// Source is a pinned input tree. Exactly one of Local, Git and Archive is set.
type Source struct {
	// Name identifies the source in overlays, steps and the lock.
	Name string `toml:"name"`
	// Local is a folder of the project.
	Local string `toml:"local"`
	// Git is a repository URL or path; Commit pins the full commit id.
	Git    string `toml:"git"`
	Commit string `toml:"commit"`
	// Archive is a path or an http(s) URL of a .tar.gz, .tar.xz or .zip
	// whose sha256 is SHA256; StripComponents drops leading path elements.
	Archive         string `toml:"archive"`
	SHA256          string `toml:"sha256"`
	StripComponents int    `toml:"strip_components"`
	// MaxSize caps the download of an archive URL, in bytes (default
	// [DefaultMaxArchiveSize]); once release.lock records the archive's
	// size, a download is also stopped as soon as it passes that size.
	MaxSize int64 `toml:"max_size"`
	// MaxEntries and MaxUnpackedSize bound what extracting an archive
	// source may make: its members (folders included) and the bytes of
	// its files in all (0: the extractor's defaults, 1,048,576 members
	// and 16 GiB). Both are counted from the archive's headers before
	// anything is extracted.
	MaxEntries      int   `toml:"max_entries"`
	MaxUnpackedSize int64 `toml:"max_unpacked_size"`
	// AllowRedirectHosts are the hosts (lower-case names, no port) an
	// archive URL may redirect to besides its own. A redirect to any other
	// host, and any redirect from https to http, is refused.
	AllowRedirectHosts []string `toml:"allow_redirect_hosts"`
	// FetchTimeout bounds fetching a git source from its server, all
	// attempts together (default [DefaultFetchTimeout]); connecting and
	// every wait for data are bounded separately (see package source).
	FetchTimeout Duration `toml:"fetch_timeout"`
	// Supplier is the SBOM's supplier of the source, in SPDX form:
	// "Organization: NAME (EMAIL)" or "Person: NAME (EMAIL)" (the email
	// part is optional). Optional: without it the SBOM says NOASSERTION
	// (a source is its upstream's and does not inherit [Project.Supplier]).
	// It is no build input: changing it changes no lock or action key.
	Supplier string `toml:"supplier" text:"prose"`
}

// DefaultFetchTimeout bounds fetching a git source whose [[source]] sets no
// fetch_timeout.
const DefaultFetchTimeout = 30 * time.Minute

// DefaultMaxArchiveSize is the download cap of an archive URL whose size
// release.lock does not record yet and whose [[source]] sets no max_size.
const DefaultMaxArchiveSize = 2 << 30

// Kind reports which kind of source s is.
func (s Source) Kind() SourceKind {
	switch {
	case s.Git != "":
		return SourceGit
	case s.Archive != "":
		return SourceArchive
	default:
		return SourceLocal
	}
}

// Location is the path or URL the source is read from.
func (s Source) Location() string {
	switch s.Kind() {
	case SourceGit:
		return s.Git
	case SourceArchive:
		return s.Archive
	default:
		return s.Local
	}
}

// OverlayKind says how an overlay changes its source.
type OverlayKind string

// The overlay kinds.
const (
	OverlayPatch OverlayKind = "patch"
	OverlayTree  OverlayKind = "tree"
)

// Overlay changes a source before it is built: a git-format patch applied
// exactly, or a tree of files copied over it. Overlays apply in the order
// they are declared.
type Overlay struct {
	Name   string `toml:"name"`
	Source string `toml:"source"`
	Patch  string `toml:"patch"`
	Tree   string `toml:"tree"`
}

// Kind reports which kind of overlay o is.
func (o Overlay) Kind() OverlayKind {
	if o.Tree != "" {
		return OverlayTree
	}
	return OverlayPatch
}

// Path is the project-relative path of the patch file or tree.
func (o Overlay) Path() string {
	if o.Tree != "" {
		return o.Tree
	}
	return o.Patch
}

// Toolchain is a tool whose identity is locked: the first line of the output
// of Command. When PerTarget is set, Command is expanded (${VAR}) with each
// target's environment and locked once per target.
type Toolchain struct {
	Name      string   `toml:"name"`
	Command   []string `toml:"command" text:"command"`
	PerTarget bool     `toml:"per_target"`
	// Targets limits the toolchain to some targets (default: all).
	Targets []string `toml:"targets"`
	// Path, when set, is a project folder (relative to release.toml)
	// holding the toolchain's programs, such as the git-ignored folder
	// scripts/bootstrap installs a compiler into. It goes first on PATH
	// when the toolchain is identified and for every build step (PATH is
	// not part of an action's key: the folder may be anywhere), and the
	// sandbox shows it read-only.
	Path string `toml:"path"`
	// Supplier is the SBOM's supplier of the toolchain, in the form of
	// [Source.Supplier]; optional (NOASSERTION without it).
	Supplier string `toml:"supplier" text:"prose"`
}

// ToolPath lists the absolute folders of the toolchains that set path, in
// the order release.toml declares them: what goes first on PATH for the
// build steps and for identifying the toolchains.
func (c *Config) ToolPath() []string {
	var out []string
	for _, tc := range c.Toolchains {
		if tc.Path != "" {
			out = append(out, filepath.Join(c.Dir, filepath.FromSlash(tc.Path)))
		}
	}
	return out
}

// Target is a platform the release is built for. Env is given to every step
// of the target (GOOS, GOARCH, CC, ...).
type Target struct {
	Name string            `toml:"name"`
	Env  map[string]string `toml:"env" text:"command"`
	// PlatformTag, when set, is the wheel platform tag claimed for the
	// target; it is refused when lower than what the binaries need. When
	// empty the tag is read from the binaries.
	PlatformTag string `toml:"platform_tag"`
	// InstallPlatform is the platform the target's bundle installs on, as a
	// wheel platform tag (its dependency closure is chosen for it). By
	// default it is the platform tag of the target's wheels; a target whose
	// wheels are pure Python ("any") must set it.
	InstallPlatform string `toml:"install_platform"`
}

// WheelRole says what a wheel is in a release pair.
type WheelRole string

// The wheel roles.
const (
	RoleCompiler WheelRole = "compiler"
	RolePlugin   WheelRole = "plugin"
)

// Wheel declares one wheel, built for every target it applies to.
type Wheel struct {
	// From names a pyproject.toml (project-relative) whose PEP 621
	// [project] table describes this wheel: its name, summary and
	// distribution fields, where not written here.
	From string `toml:"from"`
	// Name is the distribution name (PEP 508), normalised on load.
	Name string    `toml:"name"`
	Role WheelRole `toml:"role"`
	// Summary defaults to the project summary.
	Summary string `toml:"summary" text:"prose"`
	// Pair names the wheel this one requires at exactly the release
	// version (Requires-Dist: NAME==VERSION); both must agree on version,
	// target and platform tag.
	Pair string `toml:"pair"`
	// RequiresPython is a PEP 440 specifier set, e.g. ">=3.8".
	RequiresPython string `toml:"requires_python"`
	// Requires are further PEP 508 requirements (Requires-Dist).
	Requires []string `toml:"requires"`
	// Extras are the optional requirements by extra name: each extra is a
	// Provides-Extra, each of its requirements a Requires-Dist with the
	// marker extra == "NAME".
	Extras      map[string][]string `toml:"extras"`
	Classifiers []string            `toml:"classifiers"`
	Keywords    []string            `toml:"keywords" text:"prose"`
	// Include lists what goes into the wheel.
	Include []Include `toml:"include"`
	// Licenses go under .dist-info/licenses/ and are named by License-File.
	Licenses []Include `toml:"licenses"`
	// Scripts are console_scripts entry points: command → "module:object".
	Scripts map[string]string `toml:"scripts"`
	// GUIScripts are gui_scripts entry points.
	GUIScripts map[string]string `toml:"gui_scripts"`
	// EntryPoints are further entry point groups: group → name → object.
	EntryPoints map[string]map[string]string `toml:"entry_points"`
	// Targets limits the wheel to some targets (default: all).
	Targets []string `toml:"targets"`
}

// AppliesTo reports whether the wheel is built for target t.
func (w Wheel) AppliesTo(t string) bool { return appliesTo(w.Targets, t) }

// Include is a file or folder put into a wheel: taken from a source's
// prepared tree (Source) or from a build step's outputs for the wheel's
// target (Step), at From, and placed at To. With Data set (scripts, data,
// headers, purelib, platlib) it goes into the wheel's .data folder under
// that scheme instead.
type Include struct {
	Source string `toml:"source"`
	Step   string `toml:"step"`
	From   string `toml:"from"`
	To     string `toml:"to"`
	Data   string `toml:"data"`
	// Targets limits the include to some of the wheel's targets (default:
	// all), e.g. the library a step builds for one operating system.
	Targets []string `toml:"targets"`
}

// AppliesTo reports whether the include goes into the wheel of target t.
func (in Include) AppliesTo(t string) bool { return appliesTo(in.Targets, t) }

// Step is one build action, run once per target in a hermetic environment
// with the source workspace as its working directory. It must write exactly
// its declared Outputs into $MKRELEASE_OUT.
type Step struct {
	Name   string `toml:"name"`
	Source string `toml:"source"`
	// Dir is a folder of the source to run in (default: its root).
	Dir string `toml:"dir"`
	// Uses names further sources the step reads; each is given to it as
	// $MKRELEASE_SOURCE_<NAME> (upper case, non-alphanumerics as _).
	Uses []string `toml:"uses"`
	// Run is the argv; ${VAR} expands from the step's environment.
	Run []string          `toml:"run" text:"command"`
	Env map[string]string `toml:"env" text:"command"`
	// Outputs are paths relative to $MKRELEASE_OUT. A step without outputs
	// is a check (tests, linters): it is cached like any other action.
	Outputs []string `toml:"outputs"`
	// Targets limits the step to some targets (default: all).
	Targets []string `toml:"targets"`
	// Timeout bounds one run (default 30m).
	Timeout Duration `toml:"timeout"`
}

// AppliesTo reports whether the step runs for target t.
func (s Step) AppliesTo(t string) bool { return appliesTo(s.Targets, t) }

// Declares reports whether from is one of the step's outputs or a folder
// holding some of them: what a [[wheel.include]] with step may take.
func (s Step) Declares(from string) bool {
	from = path.Clean(from)
	for _, o := range s.Outputs {
		o = path.Clean(o)
		if o == from || strings.HasPrefix(o, from+"/") {
			return true
		}
	}
	return false
}

// AppliesTo reports whether the toolchain is used by target t.
func (tc Toolchain) AppliesTo(t string) bool { return appliesTo(tc.Targets, t) }

func appliesTo(list []string, t string) bool {
	if len(list) == 0 {
		return true
	}
	for _, x := range list {
		if x == t {
			return true
		}
	}
	return false
}

// Duration is a time.Duration written as a string ("90s", "10m").
type Duration struct{ time.Duration }

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("invalid duration %q: write it like \"90s\" or \"10m\"", b)
	}
	if v <= 0 {
		return fmt.Errorf("invalid duration %q: must be positive", b)
	}
	d.Duration = v
	return nil
}

// MarshalText writes the duration as a Go duration string.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// Source returns the source named name.
func (c *Config) Source(name string) (Source, bool) {
	for _, s := range c.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// Target returns the target named name.
func (c *Config) Target(name string) (Target, bool) {
	for _, t := range c.Targets {
		if t.Name == name {
			return t, true
		}
	}
	return Target{}, false
}

// TargetNames lists the declared targets in order.
func (c *Config) TargetNames() []string {
	names := make([]string, len(c.Targets))
	for i, t := range c.Targets {
		names[i] = t.Name
	}
	return names
}

// Wheel returns the wheel named name (compared after normalisation).
func (c *Config) Wheel(name string) (Wheel, bool) {
	for _, w := range c.Wheels {
		if w.Name == name {
			return w, true
		}
	}
	return Wheel{}, false
}

// SourcesOf reports which sources target t's build reads: the source and
// the uses of every step that runs for t, and the sources the wheels built
// for t take files or licenses from. Their overlays and these sources are
// the inputs of t's artifacts; no other source is.
func (c *Config) SourcesOf(t string) map[string]bool {
	out := map[string]bool{}
	for _, s := range c.Build.Steps {
		if !s.AppliesTo(t) {
			continue
		}
		out[s.Source] = true
		for _, u := range s.Uses {
			out[u] = true
		}
	}
	for _, w := range c.Wheels {
		if !w.AppliesTo(t) {
			continue
		}
		for _, in := range append(append([]Include(nil), w.Include...), w.Licenses...) {
			if in.Source != "" && in.AppliesTo(t) {
				out[in.Source] = true
			}
		}
	}
	return out
}

// OverlaysOf lists the overlays of source name in the order they apply.
func (c *Config) OverlaysOf(name string) []Overlay {
	var out []Overlay
	for _, o := range c.Overlays {
		if o.Source == name {
			out = append(out, o)
		}
	}
	return out
}
