package executor

import (
	"os"
	"strconv"
	"strings"
)

// EnvOptions are the inputs of the hermetic environment.
type EnvOptions struct {
	// Epoch is SOURCE_DATE_EPOCH.
	Epoch int64
	// GoCache is a persistent GOCACHE (content-addressed, safe to share);
	// empty means a fresh one in the scratch folder.
	GoCache string
	// PassEnv names host variables passed through unchanged; mkrelease's
	// own (MKRELEASE_*) never are.
	PassEnv []string
	// Extra are the target's and step's variables (step wins), and
	// MKRELEASE_* facts; they are applied last. A value may name another
	// variable of the environment as ${NAME} (${HOME}, ${TMPDIR},
	// ${MKRELEASE_SOURCE_X} of a source the step uses): it is expanded once,
	// against the environment as it is before the expansion, so that a
	// per-run path stays a placeholder until the step runs.
	Extra map[string]string
	// Uses are further sources the step reads: each gets its
	// MKRELEASE_SOURCE_ variable and a C prefix map to its name.
	Uses []string
	// ToolPath are folders put before the host's PATH: the toolchains of
	// release.toml that name their folder.
	ToolPath []string
}

// SearchPath is the PATH list of the folders dirs followed by the list
// path (the host's PATH).
func SearchPath(dirs []string, path string) string {
	if len(dirs) == 0 {
		return path
	}
	if path == "" {
		return strings.Join(dirs, string(os.PathListSeparator))
	}
	return strings.Join(dirs, string(os.PathListSeparator)) + string(os.PathListSeparator) + path
}

// Environment composes the environment of an action, with placeholders for
// per-run paths. PATH comes from the host, after the toolchains' own
// folders (ToolPath), so that the locked toolchains are found; it is not
// part of the action key (see [KeyEnv]), the toolchains' identities (version
// lines and executable digests) are.
func Environment(o EnvOptions) map[string]string {
	env := map[string]string{
		"PATH":              os.Getenv("PATH"),
		"HOME":              ScratchPlaceholder + "/home",
		"TMPDIR":            ScratchPlaceholder + "/tmp",
		"TZ":                "UTC",
		"LANG":              "C.UTF-8",
		"LC_ALL":            "C.UTF-8",
		"SOURCE_DATE_EPOCH": strconv.FormatInt(o.Epoch, 10),
		"MKRELEASE_OUT":     OutPlaceholder,
		// The step's own persistent folder for its tools' caches
		// (Action.Cache).
		"MKRELEASE_STEP_CACHE": CachePlaceholder,
		// Go: offline, path-independent, no VCS stamping, no toolchain
		// switching, no user configuration.
		"GOFLAGS":     "-trimpath -buildvcs=false -mod=readonly",
		"GOPROXY":     "off",
		"GOSUMDB":     "off",
		"GOTOOLCHAIN": "local",
		"GOENV":       "off",
		"GOWORK":      "off",
		"GOTELEMETRY": "off",
		"GOPATH":      ScratchPlaceholder + "/gopath",
		"GOMODCACHE":  ScratchPlaceholder + "/gopath/pkg/mod",
		"GOCACHE":     ScratchPlaceholder + "/gocache",
	}
	if o.GoCache != "" {
		env["GOCACHE"] = o.GoCache
	}
	if env["PATH"] == "" {
		env["PATH"] = "/usr/local/bin:/usr/bin:/bin"
	}
	env["PATH"] = SearchPath(o.ToolPath, env["PATH"])
	for _, k := range o.PassEnv {
		if strings.HasPrefix(k, "MKRELEASE_") {
			continue // mkrelease's own settings and secrets (MKRELEASE_KEY_PASSWORD) never reach a step
		}
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	// C compilers run by the step itself (make, cmake, ...) get the
	// path-mapping flags alone, appended to the CFLAGS and CXXFLAGS of
	// release.toml (the target's, or the step's), never replacing them and
	// adding no optimisation or debug flag of mkrelease's own: the
	// workspace becomes "." in debug info and __FILE__, and the command
	// line (which holds that path) stays out of DW_AT_producer. The
	// variables are set even when release.toml gives none, since a build
	// whose objects hold the build folder is not reproducible; a Makefile's
	// `CFLAGS ?= -O2` default is then not used (docs/building.md, "C and C++ flags": set the
	// flags in release.toml). cgo is different: with -trimpath the go command maps
	// cgo paths itself, and CGO_CFLAGS enters Go's build IDs, so it must
	// hold no per-run path at all: it is left to release.toml.
	prefixMap := "-ffile-prefix-map=" + WorkspacePlaceholder + "=."
	for _, u := range o.Uses {
		env[SourceEnv(u)] = SourcePlaceholder(u)
		prefixMap += " -ffile-prefix-map=" + SourcePlaceholder(u) + "=" + u
	}
	prefixMap += " -gno-record-gcc-switches"
	for k, v := range o.Extra {
		env[k] = v
	}
	for _, k := range []string{"CFLAGS", "CXXFLAGS"} {
		env[k] = strings.TrimSpace(o.Extra[k] + " " + prefixMap)
	}
	ref := make(map[string]string, len(env))
	for k, v := range env {
		ref[k] = v
	}
	for k := range o.Extra {
		env[k] = Expand(env[k], ref)
	}
	return env
}

// KeyEnv is the part of env that goes into an action key: everything but
// PATH, GOCACHE and MKRELEASE_STEP_CACHE, which locate tools and caches
// without changing what they produce (toolchain identities enter the key
// as inputs instead). A variable that names a folder below
// $MKRELEASE_STEP_CACHE (ZIG_GLOBAL_CACHE_DIR) is in the key, with the
// placeholder, the same on every machine.
func KeyEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		if k == "PATH" || k == "GOCACHE" || k == "MKRELEASE_STEP_CACHE" {
			continue
		}
		out[k] = v
	}
	return out
}
