package main

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/executor"
	"github.com/mkrelease/mkrelease/build/remotecache"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/pipeline"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// BuildOptions are the inputs of `mkrelease build`.
type BuildOptions struct {
	Factory    *Factory
	Global     *globalOptions
	Targets    []string
	Out        string
	NoCache    bool
	JSON       bool
	JSONFields []string
	Key        string
	// Part builds a part of the release for `mkrelease merge`.
	Part bool
	// RemoteCache is --remote-cache (default: [cache] remote);
	// RemoteUpload is --remote-cache-upload, which counts only when
	// RemoteUploadSet (default: [cache] remote_upload, else true).
	RemoteCache     string
	RemoteUpload    bool
	RemoteUploadSet bool
	// RemoteWriters are --remote-cache-trusted-writer, trusted besides
	// [cache] trusted_writers; RemoteVerify is --remote-cache-verify
	// ([cache] remote_mode = "verify" for this run).
	RemoteWriters []string
	RemoteVerify  bool
	// release is set when the build is release's: a stale source work
	// tree is then refused unless [build] require_current = false.
	release bool
}

// NewCmdBuild builds the release.
func NewCmdBuild(f *Factory, g *globalOptions, runF func(*BuildOptions) error) *cobra.Command {
	opts := &BuildOptions{Factory: f, Global: g}
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Build the release from its locked sources",
		Long: `Build verifies the pinned sources and overlays against release.lock, prepares
a workspace per source, and runs the build steps for every target hermetically
(clean environment, no network, fixed SOURCE_DATE_EPOCH), each action cached by
the digest of its inputs. The output folder is replaced in one step at the end:
a failed build leaves the previous output as it was.`,
		Example: `  mkrelease build
  mkrelease build --target linux-x86_64 --out dist-x86
  mkrelease build --no-cache --json
  mkrelease build --target linux-aarch64 --part --out part-linux-aarch64
  mkrelease build --remote-cache https://cache.example.org/mkrelease --remote-cache-upload=false
  mkrelease build --remote-cache-trusted-writer keys/ci-cache.pub
  mkrelease build --no-cache --remote-cache-verify`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.RemoteUploadSet = cmd.Flags().Changed("remote-cache-upload")
			if runF != nil {
				return runF(opts)
			}
			return buildRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Targets, "target", "t", nil, "build only this target (repeatable; default: all)")
	cmd.Flags().StringVarP(&opts.Out, "out", "o", "dist", "output folder (replaced as a whole)")
	cmd.Flags().BoolVar(&opts.NoCache, "no-cache", false, "run every action even when cached")
	cmd.Flags().BoolVar(&opts.Part, "part", false, "build a part of the release (part.json and a signed part statement instead of the provenance), for mkrelease merge")
	addRemoteCacheFlags(cmd, &opts.RemoteCache, &opts.RemoteUpload)
	cmd.Flags().StringArrayVar(&opts.RemoteWriters, "remote-cache-trusted-writer", nil, "take the remote cache's records signed by this PEM public key (repeatable; besides [cache] trusted_writers)")
	cmd.Flags().BoolVar(&opts.RemoteVerify, "remote-cache-verify", false, "take nothing from the remote cache: run every action and compare its records with what it made ([cache] remote_mode = \"verify\")")
	cmd.Flags().StringVar(&opts.Key, "key", "", "signing key URI for the provenance (default: [signing] key, else the local development key)")
	addJSONFlag(cmd, &opts.JSON, &opts.JSONFields, jsonObject,
		"project", "version", "out", "targets", "sandboxed", "sandbox", "network_isolated", "isolation_note", "actions_total", "actions_run", "actions_cached", "remote_cache", "actions_remote", "actions", "artifacts")
	return cmd
}

type buildReport struct {
	Project         string               `json:"project"`
	Version         string               `json:"version"`
	Out             string               `json:"out"`
	Targets         []string             `json:"targets"`
	Sandboxed       bool                 `json:"sandboxed"`
	Sandbox         string               `json:"sandbox,omitempty"`
	NetworkIsolated bool                 `json:"network_isolated"`
	IsolationNote   string               `json:"isolation_note,omitempty"`
	ActionsTotal    int                  `json:"actions_total"`
	ActionsRun      int                  `json:"actions_run"`
	ActionsCached   int                  `json:"actions_cached"`
	RemoteCache     string               `json:"remote_cache,omitempty"`
	ActionsRemote   int                  `json:"actions_remote"`
	Actions         []build.ActionRecord `json:"actions"`
	Artifacts       []reportArtifact     `json:"artifacts"`
}

type reportArtifact struct {
	Path   string `json:"path"`
	Kind   string `json:"kind"`
	Target string `json:"target,omitempty"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// selectTargets resolves --target flags against the configuration.
func selectTargets(cfg *config.Config, names []string) ([]config.Target, error) {
	if len(names) == 0 {
		return cfg.Targets, nil
	}
	want := map[string]bool{}
	for _, n := range names {
		if _, ok := cfg.Target(n); !ok {
			return nil, usageErrorf("unknown target %q: release.toml declares %s", n, strings.Join(cfg.TargetNames(), ", "))
		}
		want[n] = true
	}
	var out []config.Target
	for _, t := range cfg.Targets {
		if want[t.Name] {
			out = append(out, t)
		}
	}
	return out, nil
}

func buildRun(ctx context.Context, o *BuildOptions) error {
	s := newSession(o.Factory, o.Global)
	bo, err := o.pipelineOptions(ctx, s)
	if err != nil {
		return err
	}
	var compiled build.Report
	bo.Compiled = func(rep build.Report) { compiled = rep }
	r, err := pipeline.Build(ctx, bo)
	if err != nil {
		return err
	}
	return o.report(bo, r, compiled)
}

// pipelineOptions resolves build's flags, with the session's
// configuration, lock and key, into the build pipeline's options.
func (o *BuildOptions) pipelineOptions(ctx context.Context, s *session) (pipeline.BuildOptions, error) {
	g := o.Global
	log := s.log
	cfg, err := s.config()
	if err != nil {
		return pipeline.BuildOptions{}, err
	}
	l, err := s.lock()
	if err != nil {
		return pipeline.BuildOptions{}, err
	}
	targets, err := selectTargets(cfg, o.Targets)
	if err != nil {
		return pipeline.BuildOptions{}, err
	}
	cache, err := g.cacheDir(o.Factory)
	if err != nil {
		return pipeline.BuildOptions{}, err
	}
	remote, err := remoteCache(o, cfg, log)
	if err != nil {
		return pipeline.BuildOptions{}, err
	}
	// The key is decrypted while the build runs; the pipeline stops as
	// soon as it fails to open.
	signer, err := s.signingKey(ctx, o.Key, provenance.InBackground())
	if err != nil {
		return pipeline.BuildOptions{}, err
	}
	log.Info("building", "project", cfg.Project.NormalizedName, "version", cfg.Project.Version, "targets", strings.Join(names(targets), ","))
	bo := pipeline.BuildOptions{
		Config: cfg, Lock: l, LockFile: g.lockPath(), Relock: g.relockCommand(), Targets: targets,
		Out: o.Out, CacheDir: cache, NoCache: o.NoCache, Logger: log, Signer: signer, Getenv: o.Factory.Getenv,
		Sandbox: sandboxOptions(o.Factory), Part: o.Part, RequireCurrent: cfg.Build.Current(o.release),
	}
	if remote != nil {
		remote.Signer = signer // what it uploads is signed with the build's key
		bo.Remote = remote
	}
	return bo, nil
}

// report prints what the build wrote: every artifact and a summary line,
// or with --json the whole report; compiled is what its compile stage did.
func (o *BuildOptions) report(bo pipeline.BuildOptions, r *release.Release, compiled build.Report) error {
	cfg := bo.Config
	sb := compiled.Sandbox
	rep := buildReport{
		Project: cfg.Project.NormalizedName, Version: cfg.Project.Version, Out: o.Out, Targets: names(bo.Targets),
		Sandboxed: sb.Isolated, Sandbox: sb.Name, NetworkIsolated: sb.Network, IsolationNote: sb.Reason,
		Actions:      compiled.Actions,
		ActionsTotal: len(compiled.Actions),
	}
	if bo.Remote != nil {
		rep.RemoteCache = bo.Remote.Cache.String()
	}
	if rep.Actions == nil {
		rep.Actions = []build.ActionRecord{}
	}
	for _, a := range compiled.Actions {
		if a.Remote {
			rep.ActionsRemote++
		}
		if a.Cached {
			rep.ActionsCached++
		} else {
			rep.ActionsRun++
		}
	}
	rep.Artifacts = reportArtifacts(&r.Artifacts)
	if o.JSON {
		return writeJSON(o.Factory.IO.Out, rep, o.JSONFields)
	}
	w := o.Factory.IO.Out
	printArtifacts(w, &r.Artifacts)
	what := "built"
	if o.Part {
		what = "built a part of"
	}
	fmt.Fprintf(w, "%s %s %s for %s into %s: %d action%s (%d ran, %d cached); %s\n",
		what, rep.Project, rep.Version, strings.Join(rep.Targets, ", "), o.Out, rep.ActionsTotal, plural(rep.ActionsTotal), rep.ActionsRun, rep.ActionsCached, sb.Describe())
	return nil
}

// reportArtifacts lists every artifact of a run for its --json report.
func reportArtifacts(l *dist.List) []reportArtifact {
	out := []reportArtifact{}
	for _, a := range l.Filter(nil) {
		out = append(out, reportArtifact{a.Path, a.Kind.String(), a.Target, a.Size, a.SHA256})
	}
	return out
}

// printArtifacts prints a run's artifacts but the manifest, one
// `sha256sum` line each.
func printArtifacts(w io.Writer, l *dist.List) {
	for _, a := range l.Filter(dist.Not(dist.ByKind(dist.KindManifest))) {
		fmt.Fprintf(w, "%s  %s\n", a.SHA256, a.Path)
	}
}

// addRemoteCacheFlags declares --remote-cache and --remote-cache-upload.
func addRemoteCacheFlags(cmd *cobra.Command, url *string, upload *bool) {
	cmd.Flags().StringVar(url, "remote-cache", "", "shared action cache, a Bazel HTTP remote cache base URL (default: [cache] remote)")
	cmd.Flags().BoolVar(upload, "remote-cache-upload", true, "upload the actions run here to the remote cache (=false: read only; unset: [cache] remote_upload)")
}

// remoteCache returns the run's remote action cache (nil when there is
// none): its client, whether to upload to it, the writers whose records
// count, and whether it is only checked. The URL comes from --remote-cache
// or [cache] remote; a token from the variable [cache] remote_token_env
// names, else basic authentication from the netrc file ($NETRC, else
// ~/.netrc) entry of the URL's host. The caller sets the signer of
// uploads.
func remoteCache(o *BuildOptions, cfg *config.Config, log *slog.Logger) (*build.Remote, error) {
	u := o.RemoteCache
	if u != "" {
		if err := remotecache.CheckURL(u); err != nil {
			return nil, usageErrorf("--remote-cache: %v", err)
		}
	} else {
		u = cfg.Cache.Remote
	}
	if u == "" {
		return nil, nil
	}
	upload := true
	switch {
	case o.RemoteUploadSet:
		upload = o.RemoteUpload
	case cfg.Cache.RemoteUpload != nil:
		upload = *cfg.Cache.RemoteUpload
	}
	writers, err := trustedWriters(o.RemoteWriters, cfg, log)
	if err != nil {
		return nil, err
	}
	f := o.Factory
	opts := remotecache.Options{URL: u, Timeout: cfg.Cache.RemoteTimeout.Duration}
	if name := cfg.Cache.RemoteTokenEnv; name != "" {
		if opts.Token = f.Getenv(name); opts.Token == "" {
			log.Warn("the remote cache token variable is not set; using the remote cache without a token", "variable", name, "url", u)
		}
	}
	if opts.Token == "" {
		home := f.Getenv("HOME")
		if home == "" {
			home, _ = os.UserHomeDir()
		}
		opts.Netrc = remotecache.NetrcFile(f.Getenv, home)
	}
	c, err := remotecache.New(opts)
	if err != nil {
		return nil, err
	}
	return &build.Remote{Cache: c, Upload: upload, Writers: writers,
		Verify: o.RemoteVerify || cfg.Cache.RemoteMode == config.RemoteModeVerify}, nil
}

// trustedWriters loads the public keys whose records of the remote cache
// count, in the order their slots are read: [cache] trusted_writers (read
// beneath the project folder: a link leading out of it is refused, so
// that a project cannot make its build trust a key from elsewhere), then
// each --remote-cache-trusted-writer. A listed key file that is missing is
// skipped with a warning (its writer's records are not taken); one that is
// not a public key is an error.
func trustedWriters(flagKeys []string, cfg *config.Config, log *slog.Logger) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for _, k := range cfg.Cache.TrustedWriters {
		pub, err := provenance.LoadProjectPublicKey(cfg.Dir, k)
		if errors.Is(err, fs.ErrNotExist) {
			log.Warn("trusted writer's key not found; its records of the remote cache are not taken", "key", k, "in", "[cache] trusted_writers")
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: [cache] trusted_writers: %w (list PEM public keys, as mkrelease keygen writes them)", cfg.File, err)
		}
		keys = append(keys, pub)
	}
	for _, k := range flagKeys {
		pub, err := provenance.LoadPublicKey(k)
		if err != nil {
			return nil, usageErrorf("--remote-cache-trusted-writer %s: %v", k, err)
		}
		keys = append(keys, pub)
	}
	return keys, nil
}

// sandboxOptions configures the build steps' sandbox: MKRELEASE_BWRAP names
// the bubblewrap binary (default: bwrap on PATH).
func sandboxOptions(f *Factory) executor.Options {
	return executor.Options{Bwrap: f.Getenv("MKRELEASE_BWRAP")}
}

func names(ts []config.Target) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}
