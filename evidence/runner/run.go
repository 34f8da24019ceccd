// Package runner runs a release's verifier lanes against the exact wheels
// of its bundle, installed offline in disposable virtualenvs, each lane
// sandboxed where the host allows it (bubblewrap on Linux: no network
// unless the lane declares it, nothing of the host but the system, the
// interpreter, the virtualenv, the verifier and the lane's own folder; see
// laneSandbox), recomputes every aggregate from the raw records, and packs
// sanitised, checksummed, signed evidence; it also checks evidence
// (verify, import).
package runner

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/sanitize"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/parallel"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/internal/pyfind"
	"github.com/mkrelease/mkrelease/internal/treehash"
	"github.com/mkrelease/mkrelease/internal/workdir"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// RunOptions configure a verifier run.
type RunOptions struct {
	Config *config.Config
	// Dist is the release folder: the target's bundle is read from it and
	// the evidence written into it.
	Dist   string
	Target string
	// Lanes limits the run to some lanes (default: all).
	Lanes []string
	// Python is the interpreter for the virtualenvs (default: the newest
	// of the bundle's support boundary found here).
	Python string
	// Signer signs the evidence statements; Getenv reads PATH and HOME.
	Signer provenance.Signer
	Getenv func(string) string
	Logger *slog.Logger
	// Bwrap is the bubblewrap the lanes run sandboxed in (default: bwrap
	// on PATH); see isolate.go.
	Bwrap string
}

// RefusedError is evidence that could not be accepted (a private path or a
// credential in a staged file). It maps to exit status 1; nothing is
// written.
type RefusedError struct {
	Findings []sanitize.Finding
}

// Error names every file and offset.
func (e *RefusedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the evidence was rejected: %d private value%s or credential%s in the staged files:", len(e.Findings), finding.Plural(len(e.Findings)), finding.Plural(len(e.Findings)))
	for _, f := range e.Findings {
		b.WriteString("\n  " + f.String())
	}
	b.WriteString("\n\thint: a lane printed a private path, a user or host name, or a secret; make it print relative names and no secrets, then run again")
	return b.String()
}

// ExitCode is 1.
func (e *RefusedError) ExitCode() int { return 1 }

// Result is a finished verifier run.
type Result struct {
	Archive, Statements string // paths in Dist
	Summary             *Summary
}

// Run installs the target's bundle offline in a fresh virtualenv (one for
// every lane in the lanes' sandbox, one per lane without it), runs the
// lanes, recomputes every aggregate from the raw records, stages
// the evidence, rejects it when a staged file holds a private value or a
// credential, and otherwise writes the archive, its sidecar and the signed
// statements into Dist. It is a stage list (see [runStages]) over one
// run: each stage reads what the one before found.
func Run(ctx context.Context, o RunOptions) (*Result, error) {
	r := &evidenceRun{o: o, log: o.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	defer r.close()
	for _, s := range runStages() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r.log.Debug("evidence stage", "stage", s.name, "target", o.Target)
		if err := s.run(r, ctx); err != nil {
			return nil, err
		}
	}
	return r.result, nil
}

// evidenceRun is the state of one verifier run.
type evidenceRun struct {
	o   RunOptions
	log *slog.Logger

	lanes        []config.Lane    // open
	names        dist.Names       // open
	bundlePath   string           // open
	opened       *bundle.Opened   // open
	scratch      *workdir.Dir     // prepare
	work         string           // prepare
	verifier     string           // prepare
	verifierHash string           // prepare
	private      sanitize.Private // prepare
	started      time.Time        // lanes
	finished     time.Time        // lanes
	cases        []evidence.Case  // lanes
	ms           []evidence.Measurement
	venvs        []string    // venvs: each lane's virtualenv (one for all in the sandbox)
	python       string      // venvs: the interpreter of every virtualenv
	sandbox      laneSandbox // venvs: how the lanes are isolated
	watch        hostWatch   // lanes: the host's load, as the crossover lanes watch it
	run          store.Run   // records
	sum          *Summary    // records
	stage        string      // stage
	result       *Result     // pack
}

// runStage is one step of a verifier run.
type runStage struct {
	name string
	run  func(*evidenceRun, context.Context) error
}

// runStages are the steps of a verifier run, in order.
func runStages() []runStage {
	return []runStage{
		{"open", (*evidenceRun).open},          // the target's bundle, checked, and that it runs here
		{"prepare", (*evidenceRun).prepare},    // a scratch folder, the verifier sources, what is private
		{"venvs", (*evidenceRun).installVenvs}, // the bundle installed offline; the lanes' sandbox
		{"lanes", (*evidenceRun).runLanes},     // each lane, one at a time
		{"records", (*evidenceRun).records},    // sanitised records, the run identity, every aggregate recomputed
		{"stage", (*evidenceRun).stageIt},      // the evidence folder, scanned for private values
		{"pack", (*evidenceRun).packIt},        // the archive, its sidecar and the signed statements
	}
}

func (r *evidenceRun) close() {
	if r.opened != nil {
		r.opened.Close()
	}
	if r.scratch != nil {
		r.scratch.Remove()
	}
}

func (r *evidenceRun) open(ctx context.Context) error {
	c := r.o.Config
	var err error
	if r.lanes, err = selectLanes(c, r.o.Lanes); err != nil {
		return err
	}
	r.names = dist.NamesOf(c.Project.NormalizedName, c.Project.Version)
	r.bundlePath = filepath.Join(r.o.Dist, r.names.Bundle(r.o.Target))
	opened, rep, err := bundle.Open(ctx, r.bundlePath)
	if err != nil {
		return fmt.Errorf("evidence: %w", err)
	}
	r.opened = opened
	if err := rep.Err(); err != nil {
		return fmt.Errorf("evidence: the bundle to verify does not check out: %w", err)
	}
	return runsHere(opened.Root, r.o.Target)
}

func (r *evidenceRun) prepare(ctx context.Context) error {
	// The scratch folder is held while the run lives; the next run removes
	// the ones a killed run left.
	scratch, removed, err := workdir.Scratch(scratchPrefix)
	workdir.LogSwept(r.log, removed, err)
	if scratch == nil {
		return err
	}
	r.scratch, r.work = scratch, scratch.Path
	// Each lane's own folders (HOME, TMPDIR, ...) are made when it runs.
	if err := os.MkdirAll(filepath.Join(r.work, "venvs"), 0o755); err != nil {
		return err
	}
	c := r.o.Config
	r.verifier = filepath.Join(r.work, "verifier")
	if c.Evidence.Verifier != "" {
		// Beneath the project: a symbolic link leading out of it is
		// refused, naming it (package projectfile).
		src, err := projectfile.Folder(c.Dir, c.Evidence.Verifier)
		if err != nil {
			return fmt.Errorf("evidence: verifier sources (evidence.verifier in %s): %w", c.File, err)
		}
		if err := treehash.Copy(ctx, src, r.verifier); err != nil {
			return fmt.Errorf("evidence: verifier sources: %w", err)
		}
		sum, err := treehash.Hash(ctx, r.verifier)
		if err != nil {
			return err
		}
		r.verifierHash = h1Hex(sum.H1)
	}
	r.private = runPrivate(r.work, r.verifier, r.o.Getenv)
	return nil
}

// runPrivate returns what a run must not record: this machine's private
// values and the secrets of mkrelease's environment (sanitize.FromSystem),
// and the run's folders: the verifier sources, the lanes' virtualenvs and
// the scratch folder that holds them and every lane's home, temporary and
// working folder. Each folder, and the temporary and home folders, also
// count under the path they resolve to through symbolic links, which a
// lane's os.getcwd() or realpath prints.
func runPrivate(work, verifier string, getenv func(string) string) sanitize.Private {
	p := sanitize.FromSystem()
	// mkrelease takes its own secrets (the signing key's password) out of
	// its environment when it starts; getenv still answers for them.
	if getenv != nil {
		for k, v := range sanitize.EnvSecrets([]string{provenance.PasswordEnv + "=" + getenv(provenance.PasswordEnv)}) {
			if p.Secrets == nil {
				p.Secrets = map[string]string{}
			}
			p.Secrets[k] = v
		}
	}
	p.Folders = map[string]string{}
	resolved := func(path, placeholder string) {
		if real, err := filepath.EvalSymlinks(path); err == nil && real != filepath.Clean(path) {
			p.Folders[real] = placeholder
		}
	}
	for path, placeholder := range map[string]string{verifier: "{verifier}", filepath.Join(work, "venvs"): "{venvs}", work: "{work}"} {
		p.Folders[path] = placeholder
		resolved(path, placeholder)
	}
	resolved(p.Temp, sanitize.TempPlaceholder)
	resolved(p.Home, sanitize.HomePlaceholder)
	return p
}

// installVenvs installs the bundle offline in a fresh virtualenv, then
// finds how the lanes can be isolated (newLaneSandbox: the sandbox needs
// the virtualenv's interpreter). In the sandbox every lane sees the
// virtualenv read-only, so one serves them all, one lane after another:
// no lane can change what the next one runs. Without a sandbox a lane can
// write into its virtualenv, so each lane gets one of its own, installed
// side by side, as many at a time as there are CPUs, every one made with
// the interpreter the first install chose (the search for interpreters
// takes seconds where a version manager's shims are on PATH), so that the
// lanes run on one Python. Every install is done before the first lane
// runs, so none shares the machine with a lane's timings.
func (r *evidenceRun) installVenvs(ctx context.Context) error {
	if len(r.lanes) == 0 {
		return nil
	}
	o, log := r.o, r.log
	r.venvs = make([]string, len(r.lanes))
	install := func(ctx context.Context, i int, python string) (*bundle.Installed, error) {
		what := "lane " + r.lanes[i].Name
		if i == 0 {
			what = "the lanes' virtualenv"
		}
		log.Info("installing the bundle offline", "for", what, "bundle", filepath.Base(r.bundlePath))
		inst, err := bundle.Install(ctx, r.opened, bundle.InstallOptions{Venv: r.venvs[i], Python: python, Getenv: o.Getenv})
		if err != nil {
			return nil, fmt.Errorf("evidence: %s: %w", what, err)
		}
		return inst, nil
	}
	r.venvs[0] = filepath.Join(r.work, "venvs", "shared")
	r.private.Folders[r.venvs[0]] = "{venv}"
	first, err := install(ctx, 0, o.Python)
	if err != nil {
		return err
	}
	r.python = first.Python
	if own, err := r.isolate(ctx); err != nil || !own {
		return err
	}
	return parallel.Each(ctx, 0, len(r.lanes)-1, func(ctx context.Context, i int) error {
		_, err := install(ctx, i+1, r.python)
		return err
	})
}

// isolate finds how the lanes can be isolated, with the interpreter of the
// virtualenv r.venvs[0], and gives each lane its virtualenv: in the
// sandbox, that one; without it, one of its own in the run's venvs folder,
// to be made (own is true then).
func (r *evidenceRun) isolate(ctx context.Context) (own bool, err error) {
	o := r.o
	if r.sandbox, err = newLaneSandbox(ctx, r.log, o.Bwrap, r.venvs[0], r.verifier, filepath.Join(r.work, "etc"), protectedDirs(o.Getenv, o.Config.Dir)); err != nil {
		return false, err
	}
	if r.sandbox.sandboxed() {
		for i := range r.venvs {
			r.venvs[i] = r.venvs[0]
		}
		return false, nil
	}
	for i, l := range r.lanes[1:] {
		r.venvs[i+1] = filepath.Join(r.work, "venvs", l.Name)
		r.private.Folders[r.venvs[i+1]] = "{venv}"
	}
	return true, nil
}

func (r *evidenceRun) runLanes(ctx context.Context) error {
	o, log, work := r.o, r.log, r.work
	r.started = time.Now().UTC()
	watched := false // r.watch is made for the first crossover lane
	for i, l := range r.lanes {
		venv := r.venvs[i]
		host := ""
		if o.Getenv != nil {
			host = o.Getenv("PATH")
		}
		// The lane's own folder, the only one it may write: its HOME,
		// TMPDIR, working folder and cases file.
		own := filepath.Join(work, "lanes", l.Name)
		home, tmp := filepath.Join(own, "home"), filepath.Join(own, "tmp")
		env := laneEnv{
			vars: map[string]string{
				"PATH": bundle.VenvBin(venv) + string(os.PathListSeparator) + host, "VIRTUAL_ENV": venv,
				"HOME": home, "TMPDIR": tmp,
				"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
				"PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1",
			},
			expand: map[string]string{"PYTHON": bundle.VenvPython(venv), "VERIFIER": r.verifier},
			dir:    filepath.Join(own, "run"),
			log:    func(f string, a ...any) { log.Info(fmt.Sprintf(f, a...)) },
			box:    r.sandbox.lane(l, venv, own, home),
		}
		for _, d := range []string{home, tmp, env.dir} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if l.Network && env.box != nil {
			log.Info("lane keeps the host's network (network = true)", "lane", l.Name)
		}
		switch l.Kind {
		case config.LaneCases:
			lc, _, err := runCases(ctx, l, env, filepath.Join(own, "cases.jsonl"))
			if err != nil {
				return err
			}
			r.cases = append(r.cases, lc...)
		case config.LaneCrossover:
			if !watched {
				r.watch, watched = newHostWatch(), true
			}
			env.watch = r.watch // with the lane's max_host_load (runCrossover)
			ms, err := runCrossover(ctx, l, env)
			var stopped *LaneStoppedError
			if errors.As(err, &stopped) {
				stopped.Target = o.Target
			}
			if err != nil {
				return err
			}
			r.ms = append(r.ms, ms...)
		}
	}
	r.finished = time.Now().UTC()
	return nil
}

func (r *evidenceRun) records(ctx context.Context) error {
	// Everything recorded passes through the sanitiser first.
	for i := range r.cases {
		r.cases[i].Message = r.private.String(r.cases[i].Message)
		r.cases[i].ID = r.private.String(r.cases[i].ID)
	}
	for i := range r.ms {
		r.ms[i].Error = r.private.String(r.ms[i].Error)
	}
	venv := "" // the first lane's virtualenv identifies the run
	if len(r.venvs) > 0 {
		venv = r.venvs[0]
	}
	run, err := identity(ctx, r.o, r.opened.Root, venv, r.python, r.verifierHash, r.lanes, r.private)
	if err != nil {
		return err
	}
	run.Isolation = r.sandbox.isolation(r.lanes, r.private)
	if run.ID, err = randomID(); err != nil {
		return err
	}
	r.run = run
	r.sum, err = Recompute(r.lanes, r.cases, r.ms)
	return err
}

func (r *evidenceRun) stageIt(context.Context) error {
	r.stage = filepath.Join(r.work, "stage", r.names.EvidenceRoot(r.o.Target))
	if err := writeStage(r.stage, r.o.Config, r.o.Target, r.run, r.lanes, r.watch, r.cases, r.ms, r.sum, r.started, r.finished); err != nil {
		return err
	}
	findings, err := r.private.Scanner().ScanTree(r.stage)
	if err != nil {
		return err
	}
	if len(findings) > 0 {
		return &RefusedError{Findings: findings}
	}
	return nil
}

func (r *evidenceRun) packIt(ctx context.Context) error {
	archive, statements, err := pack(ctx, r.o, r.stage, r.run, r.sum)
	if err != nil {
		return err
	}
	r.result = &Result{Archive: archive, Statements: statements, Summary: r.sum}
	return nil
}

// scratchPrefix names a verifier run's scratch folder in the temporary
// folder; checkScratchPrefix a check's. Neither is a prefix of the other,
// so a run sweeps only what killed runs left, never a live check's.
const (
	scratchPrefix      = "mkrelease-evidence-run-"
	checkScratchPrefix = "mkrelease-evidence-check-"
)

func selectLanes(c *config.Config, names []string) ([]config.Lane, error) {
	if len(c.Evidence.Lanes) == 0 {
		return nil, &config.Error{File: c.File, Key: "evidence.lane", Msg: "no verifier lanes", Hint: "declare [[evidence.lane]] tables in release.toml"}
	}
	// One protocol per run: the store records it once.
	var proto *config.Lane
	for i, l := range c.Evidence.Lanes {
		if l.Kind != config.LaneCrossover {
			continue
		}
		if proto == nil {
			proto = &c.Evidence.Lanes[i]
		} else if l.Steps != proto.Steps || l.Warmups != proto.Warmups {
			return nil, &config.Error{File: c.File, Key: "evidence.lane", Msg: fmt.Sprintf("crossover lanes %s (%d steps, %d warm-ups) and %s (%d steps, %d warm-ups) measure differently", proto.Name, proto.Steps, proto.Warmups, l.Name, l.Steps, l.Warmups), Hint: "give every crossover lane the same steps and warmups"}
		}
	}
	if len(names) == 0 {
		return c.Evidence.Lanes, nil
	}
	var out []config.Lane
	for _, n := range names {
		found := false
		for _, l := range c.Evidence.Lanes {
			if l.Name == n {
				out = append(out, l)
				found = true
			}
		}
		if !found {
			var all []string
			for _, l := range c.Evidence.Lanes {
				all = append(all, l.Name)
			}
			return nil, &config.Error{File: c.File, Key: "evidence.lane", Msg: fmt.Sprintf("no lane %q", n), Hint: "lanes: " + strings.Join(all, ", ")}
		}
	}
	return out, nil
}

func h1Hex(h1 string) string {
	b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(h1, "h1:"))
	if err != nil {
		return ""
	}
	return hex.EncodeToString(b)
}

func randomID() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// identity computes the run identity: the wheels of the bundle, the native
// libraries and distributions installed in the lanes' environment, the
// verifier sources, the interpreter, the lanes and protocol, and the
// sanitised environment.
func identity(ctx context.Context, o RunOptions, bundleRoot, venv, python, verifierHash string, lanes []config.Lane, private sanitize.Private) (store.Run, error) {
	run := store.Run{Target: o.Target, SourcesTreeHash: verifierHash}
	c := o.Config
	wheels, err := wheelDigests(bundleRoot)
	if err != nil {
		return run, err
	}
	for n, sha := range wheels {
		run.Wheels = append(run.Wheels, store.FileDigest{Name: n, SHA256: sha})
	}
	if in, err := pyfind.Probe(ctx, python); err == nil {
		run.Interpreter = "CPython " + in.Version
	}
	site, _ := filepath.Glob(filepath.Join(venv, "lib", "python3.*", "site-packages"))
	if len(site) == 1 {
		err := filepath.WalkDir(site[0], func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(site[0], p)
			if strings.HasSuffix(rel, ".dist-info/METADATA") {
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				md, err := wheel.ParseMetadata(data)
				if err != nil {
					return nil
				}
				run.Distributions = append(run.Distributions, store.Distribution{Name: md.Name, Version: md.Version, MetadataSHA256: checksum.Bytes(data)})
				return nil
			}
			if _, err := platform.Inspect(p); err == nil {
				sha, _, err := checksum.File(p)
				if err != nil {
					return err
				}
				run.NativeLibraries = append(run.NativeLibraries, store.FileDigest{Name: filepath.ToSlash(rel), SHA256: sha})
			}
			return nil
		})
		if err != nil {
			return run, err
		}
	}
	for _, l := range lanes {
		run.Lanes = append(run.Lanes, l.Name)
		if l.Kind == config.LaneCrossover {
			run.Protocol = store.Protocol{Steps: l.Steps, WarmUps: l.Warmups}
		}
	}
	sort.Strings(run.Lanes)
	env := map[string]string{"LANG": "C.UTF-8", "TZ": "UTC", "PYTHONHASHSEED": "0"}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	for _, k := range c.Evidence.RecordEnv {
		if v := getenv(k); v != "" {
			env[k] = v
		}
	}
	run.Environment = private.Env(env, c.Evidence.RecordEnv...)
	sort.Slice(run.Wheels, func(i, j int) bool { return run.Wheels[i].Name < run.Wheels[j].Name })
	return run, nil
}

// Manifest is the evidence's manifest.json.
type Manifest struct {
	Schema   string          `json:"schema"`
	Project  string          `json:"project"`
	Version  string          `json:"version"`
	Target   string          `json:"target"`
	RunID    string          `json:"run_id"`
	Started  string          `json:"started"`
	Finished string          `json:"finished"`
	Identity json.RawMessage `json:"identity"`
	Lanes    []ManifestLane  `json:"lanes"`
}

// ManifestLane describes one lane as it ran.
type ManifestLane struct {
	Name      string            `json:"name"`
	Kind      string            `json:"kind"`
	Steps     int               `json:"steps,omitempty"`
	Warmups   int               `json:"warmups,omitempty"`
	Timeout   string            `json:"timeout"`
	Workloads []config.Workload `json:"workloads,omitempty"`
	// HostWatch is how a crossover lane watched the host's load while
	// it ran: whether, with which max_host_load (0: the watch turned
	// off), or why not. Evidence made before mkrelease recorded it has
	// none.
	HostWatch *ManifestHostWatch `json:"host_watch,omitempty"`
	// Env, CandidateEnv and ReferenceEnv are the lane's configured
	// variables (the rest of a lane's environment is fixed by mkrelease).
	Env          map[string]string `json:"env,omitempty"`
	CandidateEnv map[string]string `json:"candidate_env,omitempty"`
	ReferenceEnv map[string]string `json:"reference_env,omitempty"`
	Files        []string          `json:"files"`
}

// ManifestSchema identifies the evidence manifest format.
const ManifestSchema = "https://mkrelease.dev/schemas/evidence/v1"

// NotRunnableError is a target whose wheels cannot run on this machine:
// its evidence is made on a machine of its platform and imported.
type NotRunnableError struct {
	Target, Wheel, Machine string
}

// Error names the wheel and the remedy.
func (e *NotRunnableError) Error() string {
	return fmt.Sprintf("evidence: target %s cannot run here: its wheel %s is not for this %s machine; run `mkrelease evidence run --target %s` on a machine of that platform, then `mkrelease evidence import` the evidence here",
		e.Target, e.Wheel, e.Machine, e.Target)
}

// ExitCode is 2: the invocation asked for something this machine cannot do.
func (e *NotRunnableError) ExitCode() int { return 2 }

// runsHere checks that every wheel of an extracted bundle can run on this
// machine.
func runsHere(root, target string) error {
	for _, sub := range []string{"wheels", "dependencies"} {
		for _, p := range dist.WheelFiles(filepath.Join(root, sub)) {
			fn, err := wheel.ParseFilename(filepath.Base(p))
			if err != nil {
				return fmt.Errorf("evidence: %s: %w", filepath.Base(p), err)
			}
			if !platform.RunsOn(fn.Platform, runtime.GOOS, runtime.GOARCH) {
				return &NotRunnableError{Target: target, Wheel: filepath.Base(p), Machine: runtime.GOOS + "/" + runtime.GOARCH}
			}
		}
	}
	return nil
}
