package dist

import "github.com/mkrelease/mkrelease/internal/pin"

// ManifestSchema identifies the manifest.json format.
const ManifestSchema = "https://mkrelease.dev/schemas/manifest/v1"

// Manifest is manifest.json: every input of the build and every output, with
// digests. It holds no time but the epoch, no host, user or absolute path,
// so two builds of the same inputs write the same bytes.
type Manifest struct {
	Schema          string              `json:"schema"`
	Project         ManifestProject     `json:"project"`
	Mkrelease       string              `json:"mkrelease"`
	SourceDateEpoch int64               `json:"source_date_epoch"`
	Config          ManifestConfig      `json:"config"`
	Sources         []ManifestSource    `json:"sources"`
	Overlays        []ManifestOverlay   `json:"overlays"`
	Toolchains      []ManifestToolchain `json:"toolchains"`
	// Build says how the build steps were isolated from the host.
	Build   ManifestBuild    `json:"build"`
	Targets []ManifestTarget `json:"targets"`
	// Bundle is set in the manifest inside a bundle: its target, support
	// boundary and closure.
	Bundle *ManifestBundle `json:"bundle,omitempty"`
}

// ManifestBundle describes the bundle a manifest ships in.
type ManifestBundle struct {
	Target       string             `json:"target"`
	PlatformTag  string             `json:"platform_tag"`
	Pythons      []string           `json:"pythons"`
	Dependencies []ManifestArtifact `json:"dependencies"`
}

// ManifestProject names the release.
type ManifestProject struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ManifestConfig holds the digests of release.toml, release.lock and every
// other project file the release reads (readme, changelog, dependency lock),
// by path.
type ManifestConfig struct {
	ReleaseTOML string            `json:"release_toml_sha256"`
	ReleaseLock string            `json:"release_lock_sha256"`
	Files       map[string]string `json:"files_sha256,omitempty"`
}

// ManifestSource is a pinned source as built: release.lock's entry, of
// which manifest.json holds the name, kind, location, commit, commit_time,
// sha256 and tree.
type ManifestSource = pin.Source

// ManifestOverlay is an overlay as applied.
type ManifestOverlay struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	Kind   string `json:"kind"`
	Path   string `json:"path"`
	Digest string `json:"digest"`
	Result string `json:"result"`
}

// ManifestBuild records how the build steps ran: sandboxed (their own
// namespaces and a file system view of the system, the toolchains and their
// own folders only), or not, and then at which isolation level (network: a
// network namespace alone; none). The sandbox's name and version, and why a
// build was not sandboxed, are host facts: they go into the provenance, not
// here.
//
// A release merged from parts (mkrelease merge) records the parts no
// trusted key vouched for, which merge takes only with
// --allow-unsigned-parts; a release built on one machine, or merged from
// parts whose statements all verified, records none, and its manifest is
// byte for byte the same.
type ManifestBuild struct {
	Sandboxed bool   `json:"sandboxed"`
	Isolation string `json:"isolation"`
	// UnsignedParts are the parts merged without a signature by a trusted
	// key, in release.toml's target order.
	UnsignedParts []ManifestPart `json:"unsigned_parts,omitempty"`
}

// ManifestPart names a part of a merged release: the targets it held and
// the sha256 of its part.json, which lists every file of it by digest.
type ManifestPart struct {
	Targets    []string `json:"targets"`
	PartSHA256 string   `json:"part_sha256"`
	// Reason says why no trusted key vouched for it: the part carried no
	// statement, or no key was trusted to check the one it carried.
	Reason string `json:"reason"`
}

// ManifestToolchain is a toolchain identity, release.lock's entry: its
// name, target, version line and the sha256 of its executable.
type ManifestToolchain = pin.Toolchain

// ManifestTarget lists a target's declared environment, its build outputs
// and its wheels.
type ManifestTarget struct {
	Name         string             `json:"name"`
	Env          map[string]string  `json:"env,omitempty"`
	PlatformTag  string             `json:"platform_tag,omitempty"`
	Outputs      []ManifestArtifact `json:"outputs"`
	Wheels       []ManifestArtifact `json:"wheels"`
	Dependencies []ManifestArtifact `json:"dependencies"`
	Bundle       *ManifestArtifact  `json:"bundle,omitempty"`
}

// ManifestArtifact is one output file.
type ManifestArtifact struct {
	Path   string `json:"path"`
	Name   string `json:"name,omitempty"`
	Step   string `json:"step,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// URL is where a dependency wheel was fetched from, when that is an
	// http(s) URL (not a local folder: a path of the machine that built).
	URL string `json:"url,omitempty"`
}
