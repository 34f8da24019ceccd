// Package assemble is the wheel stage of the release pipeline: for every
// target it gathers each declared wheel's files (from prepared sources and
// from the target's build outputs), reads the platform its binaries need,
// writes the wheels deterministically, and checks the release pair.
//
// The platform tag of a target is shared by all its native wheels: it is
// the tag configured for the target, refused when lower than what any
// binary of the target needs, or else the tag the binaries need (package
// platform). A wheel declared for every target with no native binary
// (ELF, Mach-O, PE) for any of them is py3-none-any: one file for the
// whole release (its artifact has no target), which every target's bundle
// holds; its bytes must be the same whichever target builds it.
package assemble

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mkrelease/mkrelease/build"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/testhook"
	"github.com/mkrelease/mkrelease/internal/treehash"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
	"github.com/mkrelease/mkrelease/wheel/platform"
)

// Stage builds the wheels of every selected target into the staging folder.
type Stage struct {
	// Workspaces are the prepared sources an include's source names (the
	// sources stage fills them).
	Workspaces build.Workspaces
}

// String names the stage.
func (Stage) String() string { return "wheels" }

// Skip skips the stage when release.toml declares no wheel.
func (Stage) Skip(r *release.Release) (string, bool) {
	if len(r.Config.Wheels) == 0 {
		return "release.toml declares no [[wheel]]", true
	}
	return "", false
}

// Error is a wheel that cannot be assembled as declared. It maps to exit
// status 1.
type Error struct {
	Wheel, Target string
	Msg           string
	Hint          string
}

// Error names the wheel and target.
func (e *Error) Error() string {
	s := fmt.Sprintf("wheel %s [%s]: %s", e.Wheel, e.Target, e.Msg)
	if e.Hint != "" {
		s += "\n\thint: " + e.Hint
	}
	return s
}

// ExitCode is 1.
func (e *Error) ExitCode() int { return 1 }

// Run assembles and writes the wheels.
func (s Stage) Run(ctx context.Context, r *release.Release) error {
	p, err := s.Plan(r)
	if err != nil {
		return err
	}
	for i := range r.Targets {
		if err := p.Write(ctx, r, i); err != nil {
			return err
		}
	}
	return CheckPairs(r)
}

// Plan is the stage's work split by target, so that a pipeline can take
// up a target's wheels (its closure, its bundle) while the next target's
// are written: [Stage.Plan], then [Plan.Write] of each target in the order
// of r.Targets, one at a time, then [CheckPairs].
type Plan struct {
	s      Stage
	plans  [][]*planned // by target, in the order of r.Targets
	pure   map[string]bool
	shared map[string]sharedWheel // the pure wheels written so far
	writer string
}

// Plan gathers every target's wheels and the platform their binaries
// need, and finds the pure wheels; nothing is written yet.
func (s Stage) Plan(r *release.Release) (*Plan, error) {
	p := &Plan{s: s, plans: make([][]*planned, len(r.Targets)), shared: map[string]sharedWheel{}}
	if !r.NoCache {
		p.writer = r.WriterIdentity()
	}
	for i, t := range r.Targets {
		ps, err := s.planTarget(r, t)
		if err != nil {
			return nil, err
		}
		p.plans[i] = ps
	}
	p.pure = pureWheels(r.Config, p.plans)
	return p, nil
}

// Write writes the wheels of r.Targets[i] and records them in
// r.Artifacts. Targets are written in order: a pure wheel is written by
// the first target and compared by the others.
func (p *Plan) Write(ctx context.Context, r *release.Release, i int) error {
	return p.s.buildTarget(ctx, r, r.Targets[i], p.plans[i], p.pure, p.shared, p.writer)
}

type planned struct {
	cfg      config.Wheel
	contents *wheel.Contents
	binaries []string // wheel paths of native members, for messages
	needs    []platform.Need
}

// pureTag is the platform tag of a wheel without native code.
const pureTag = "any"

// pureWheels returns the names of the wheels that are pure Python for the
// whole release: declared for every target of release.toml with the same
// includes (none limited to some targets), and with no native binary
// (ELF, Mach-O, PE) among their members for any target planned (plans
// holds each target's planned wheels). Such a wheel is py3-none-any: the
// same file for every target, written once.
func pureWheels(c *config.Config, plans [][]*planned) map[string]bool {
	pure := map[string]bool{}
	for _, w := range c.Wheels {
		pure[w.Name] = len(c.Targets) > 0
		for _, t := range c.Targets {
			if !w.AppliesTo(t.Name) {
				pure[w.Name] = false
			}
		}
		for _, in := range append(slices.Clone(w.Include), w.Licenses...) {
			if len(in.Targets) > 0 {
				pure[w.Name] = false
			}
		}
	}
	for _, ps := range plans {
		for _, p := range ps {
			if len(p.binaries) > 0 {
				pure[p.cfg.Name] = false
			}
		}
	}
	return pure
}

// sharedWheel is a pure wheel already written, for the target that wrote it.
type sharedWheel struct {
	target string
	sha256 string
	// key is its contents' CacheKey for sameWriter: another target's
	// contents with the same key make the same bytes.
	key string
}

// sameWriter stands for the writer in the keys that compare one run's
// pure wheels: the same code writes them all.
const sameWriter = "this run"

func (s Stage) planTarget(r *release.Release, t config.Target) ([]*planned, error) {
	var plans []*planned
	for _, w := range r.Config.Wheels {
		if !w.AppliesTo(t.Name) {
			continue
		}
		p, ns, err := s.plan(r, t, w)
		if err != nil {
			return nil, err
		}
		p.needs = ns
		plans = append(plans, p)
	}
	return plans, nil
}

// buildTarget writes target t's wheels. Its native wheels share one
// platform tag; a pure wheel (pure) is py3-none-any, written by the first
// target and only compared by the others: its bytes must be the same for
// every target (shared records the written ones).
func (s Stage) buildTarget(ctx context.Context, r *release.Release, t config.Target, plans []*planned, pure map[string]bool, shared map[string]sharedWheel, writer string) error {
	if len(plans) == 0 {
		return nil
	}
	var needs []platform.Need
	for _, p := range plans {
		needs = append(needs, p.needs...)
	}
	tag := pureTag
	switch {
	case t.PlatformTag != "":
		if err := platform.Satisfies(t.PlatformTag, needs); err != nil {
			return &Error{Wheel: plans[0].cfg.Name, Target: t.Name, Msg: err.Error(),
				Hint: "raise platform_tag of the target, or remove it to use the tag the binaries need"}
		}
		tag = t.PlatformTag
	case len(needs) > 0:
		var err error
		if tag, err = platform.Tag(needs); err != nil {
			return &Error{Wheel: plans[0].cfg.Name, Target: t.Name, Msg: err.Error()}
		}
	}
	if err := platform.CheckPolicy(needs); err != nil {
		return &Error{Wheel: plans[0].cfg.Name, Target: t.Name, Msg: err.Error(),
			Hint: "bundle the library in the wheel or link it statically"}
	}
	for _, p := range plans {
		wtag, target := tag, t.Name
		if pure[p.cfg.Name] {
			wtag, target = pureTag, ""
		}
		name, err := wheel.NewFilename(p.cfg.Name, r.Config.Project.Version, "py3", "none", wtag)
		if err != nil {
			return &Error{Wheel: p.cfg.Name, Target: t.Name, Msg: err.Error()}
		}
		p.contents.Name = name
		if err := addDistInfo(r, p, t.Name, wtag); err != nil {
			return err
		}
		if first, ok := shared[p.cfg.Name]; ok {
			if err := sameAsWritten(ctx, r, p, t.Name, first); err != nil {
				return err
			}
			continue
		}
		res, err := write(ctx, r, t.Name, p.contents, writer)
		if err != nil {
			return err
		}
		if target == "" {
			key, err := p.contents.CacheKey(sameWriter)
			if err != nil {
				return err
			}
			shared[p.cfg.Name] = sharedWheel{target: t.Name, sha256: res.SHA256, key: key}
		}
		r.Artifacts.Add(dist.Artifact{Kind: dist.KindWheel, Path: filepath.Base(res.Path), Target: target,
			Name: p.cfg.Name, PlatformTag: wtag, SHA256: res.SHA256, Size: res.Size})
		r.Logger.Info("wheel written", "wheel", filepath.Base(res.Path), "target", t.Name)
	}
	return nil
}

// sameAsWritten refuses pure wheel p as target builds it when it would not
// be the file first wrote, byte for byte.
func sameAsWritten(ctx context.Context, r *release.Release, p *planned, target string, first sharedWheel) error {
	// The same contents (every member's path, mode and digest, the name,
	// the epoch) make the same wheel: nothing is compressed again.
	key, err := p.contents.CacheKey(sameWriter)
	if err != nil {
		return err
	}
	if key == first.key {
		return nil
	}
	// They differ: write this target's to say how.
	tmp, err := os.MkdirTemp(r.Scratch, "pure-wheel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	res, err := wheel.Write(ctx, p.contents, tmp)
	if err != nil {
		return err
	}
	return &Error{Wheel: p.cfg.Name, Target: target,
		Msg:  fmt.Sprintf("it has no native code, so it is one py3-none-any file for every target, but its files differ from those of target %s (sha256 %s, not %s)", first.target, res.SHA256, first.sha256),
		Hint: "make its files the same for every target (no step output that differs between targets), or limit an include to some targets (`targets`) so that each target has its own wheel"}
}

// inspectMemo is where the platform needs of binaries are remembered by
// their content: the cache's platform folder, unless the run uses no cache
// (--no-cache inspects every binary).
func inspectMemo(r *release.Release) platform.Memo {
	if r.NoCache || r.CacheDir == "" {
		return platform.Memo{}
	}
	m := PlatformMemo(r.CacheDir)
	m.Version = r.WriterIdentity()
	return m
}

// PlatformMemo is where builds that use the cache folder cacheDir
// remember the platform needs of binaries (without a Version: it reads
// nothing, and can be trimmed).
func PlatformMemo(cacheDir string) platform.Memo {
	return platform.Memo{Dir: filepath.Join(cacheDir, "platform")}
}

// plan gathers a wheel's members for target t and the platform needs of
// its binaries (inspected in parallel on all cores).
func (s Stage) plan(r *release.Release, t config.Target, w config.Wheel) (*planned, []platform.Need, error) {
	p := &planned{cfg: w, contents: &wheel.Contents{Epoch: r.Epoch}}
	type member struct {
		m    wheel.Member
		data string // .data scheme, or ""
	}
	var members []member
	for _, in := range w.Include {
		if !in.AppliesTo(t.Name) {
			continue
		}
		files, err := s.resolve(r, t, w, in)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			members = append(members, member{f, in.Data})
		}
	}
	memo := inspectMemo(r)
	needs := make([]*platform.Need, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i := range members {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer func() { <-sem; wg.Done() }()
			n, err := memo.Inspect(members[i].m.File, members[i].m.SHA256)
			switch {
			case errors.Is(err, platform.ErrNotBinary):
			case err != nil:
				errs[i] = err
			default:
				n.File = members[i].m.Path
				needs[i] = &n
			}
		}(i)
	}
	wg.Wait()
	var out []platform.Need
	for i, mb := range members {
		if errs[i] != nil {
			return nil, nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("%s: %v", mb.m.Path, errs[i])}
		}
		if needs[i] != nil {
			out = append(out, *needs[i])
			p.binaries = append(p.binaries, mb.m.Path)
		}
		f := mb.m
		if mb.data != "" {
			f.Path = mb.data + "/" + f.Path
			p.contents.Data = append(p.contents.Data, f)
		} else {
			p.contents.Members = append(p.contents.Members, f)
		}
	}
	for _, in := range w.Licenses {
		if !in.AppliesTo(t.Name) {
			continue
		}
		files, err := s.resolve(r, t, w, in)
		if err != nil {
			return nil, nil, err
		}
		for _, f := range files {
			f.Path = "licenses/" + f.Path
			f.Mode = 0o644
			p.contents.DistInfo = append(p.contents.DistInfo, f)
		}
	}
	return p, out, nil
}

// resolve lists the files an include names, with their paths in the wheel
// (relative to the wheel root, the .data scheme or the licenses folder).
func (s Stage) resolve(r *release.Release, t config.Target, w config.Wheel, in config.Include) ([]wheel.Member, error) {
	var base, what string
	// known gives the sha256 an earlier stage computed for the file at
	// slash path p below `from`'s base, or "".
	var known func(p string) string
	var names []string // the files of the folder `from` names, relative to it
	to := in.To
	switch {
	case in.Source != "":
		// A source's files are those of its hashed tree, not what its
		// folder holds now (a local source may be read in place, and a file
		// added during the build is not part of the source); a file the
		// tree leaves out (in .git or __pycache__, which may hold anything,
		// symbolic links included) is not part of the source either, and
		// never enters a wheel.
		base, what = s.Workspaces[in.Source], "source "+in.Source
		tree := r.Trees[in.Source]
		known = func(p string) string { return tree[p] }
		from := path.Clean(in.From)
		if sha, ok := tree[from]; ok {
			src := filepath.Join(base, filepath.FromSlash(from))
			st, err := os.Lstat(src)
			if err != nil || !st.Mode().IsRegular() {
				return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("%s: %s is no longer the regular file that was hashed", what, in.From),
					Hint: "leave the source alone while mkrelease builds"}
			}
			if to == "" || strings.HasSuffix(to, "/") {
				to += path.Base(in.From)
			}
			return []wheel.Member{{Path: to, File: src, Mode: treehash.NormalMode(st.Mode()), SHA256: sha}}, nil
		}
		if names = treeFiles(tree, from); len(names) == 0 {
			return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("%s has no %s", what, in.From),
				Hint: "fix `from` in release.toml: name a file or a folder with files of the source (.git and __pycache__ folders are not part of it)"}
		}
	default:
		step, ok := stepByName(r.Config, in.Step)
		if !ok || !step.AppliesTo(t.Name) {
			return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("step %s does not run for this target", in.Step),
				Hint: "limit the wheel to the step's targets, or run the step for this target"}
		}
		if !step.Declares(in.From) {
			return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("step %s declares no output %s", in.Step, in.From),
				Hint: "name one of its outputs: " + strings.Join(step.Outputs, ", ")}
		}
		base, what = filepath.Join(r.Stage, build.BinDir, t.Name), "step "+in.Step
		outputs := map[string]string{}
		for _, a := range r.Artifacts.Filter(dist.And(dist.ByKind(dist.KindBinary), dist.ByTarget(t.Name))) {
			outputs[a.Path] = a.SHA256
		}
		known = func(p string) string { return outputs[path.Join(build.BinDir, t.Name, p)] }
		src := filepath.Join(base, filepath.FromSlash(in.From))
		st, err := os.Stat(src)
		if err != nil {
			return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("%s has no %s", what, in.From), Hint: "fix `from` in release.toml"}
		}
		if !st.IsDir() {
			if to == "" || strings.HasSuffix(to, "/") {
				to += path.Base(in.From)
			}
			return []wheel.Member{{Path: to, File: src, Mode: treehash.NormalMode(st.Mode()), SHA256: known(in.From)}}, nil
		}
		if names, err = treehash.List(src); err != nil {
			return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: err.Error()}
		}
		if len(names) == 0 {
			return nil, &Error{Wheel: w.Name, Target: t.Name, Msg: fmt.Sprintf("%s: %s is an empty folder", what, in.From)}
		}
	}
	src := filepath.Join(base, filepath.FromSlash(in.From))
	var out []wheel.Member
	for _, n := range names {
		if strings.HasSuffix(n, ".pyc") || strings.HasSuffix(n, ".pyo") {
			continue
		}
		fi, err := os.Stat(filepath.Join(src, filepath.FromSlash(n)))
		if err != nil {
			return nil, err
		}
		out = append(out, wheel.Member{Path: path.Join(to, n), File: filepath.Join(src, filepath.FromSlash(n)), Mode: treehash.NormalMode(fi.Mode()),
			SHA256: known(path.Join(in.From, n))})
	}
	return out, nil
}

// treeFiles lists the files of tree (slash paths to digests) below the
// folder from, relative to it and sorted.
func treeFiles(tree map[string]string, from string) []string {
	prefix := path.Clean(from) + "/"
	if prefix == "./" {
		prefix = ""
	}
	var out []string
	for p := range tree {
		if rest, ok := strings.CutPrefix(p, prefix); ok {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}

func stepByName(c *config.Config, name string) (config.Step, bool) {
	for _, s := range c.Build.Steps {
		if s.Name == name {
			return s, true
		}
	}
	return config.Step{}, false
}

// addDistInfo adds METADATA, WHEEL and entry_points.txt.
func addDistInfo(r *release.Release, p *planned, target, tag string) error {
	md, err := Metadata(r.Config, p.cfg, tag, licenseFiles(p.contents))
	if err != nil {
		return &Error{Wheel: p.cfg.Name, Target: target, Msg: err.Error()}
	}
	data, err := md.Bytes()
	if err != nil {
		return &Error{Wheel: p.cfg.Name, Msg: err.Error()}
	}
	purelib := "false"
	if tag == pureTag {
		purelib = "true"
	}
	generator := "mkrelease (" + release.ToolVersion + ")"
	if testhook.Nondeterministic("wheel-generator") {
		generator += fmt.Sprintf(" run %d", time.Now().UnixNano())
	}
	wheelFile := fmt.Sprintf("Wheel-Version: 1.0\nGenerator: %s\nRoot-Is-Purelib: %s\n", generator, purelib)
	for _, t := range p.contents.Name.Tags() {
		wheelFile += "Tag: " + t + "\n"
	}
	p.contents.DistInfo = append(p.contents.DistInfo,
		wheel.Member{Path: "METADATA", Data: data, Mode: 0o644},
		wheel.Member{Path: "WHEEL", Data: []byte(wheelFile), Mode: 0o644})
	if ep := EntryPoints(p.cfg); ep != nil {
		p.contents.DistInfo = append(p.contents.DistInfo, wheel.Member{Path: "entry_points.txt", Data: ep, Mode: 0o644})
	}
	return nil
}

func licenseFiles(c *wheel.Contents) []string {
	var out []string
	for _, m := range c.DistInfo {
		if rest, ok := strings.CutPrefix(m.Path, "licenses/"); ok {
			out = append(out, rest)
		}
	}
	sort.Strings(out)
	return out
}

// EntryPoints renders entry_points.txt (nil when the wheel has none):
// console_scripts, gui_scripts, then the other groups, each sorted.
func EntryPoints(w config.Wheel) []byte {
	groups := map[string]map[string]string{}
	if len(w.Scripts) > 0 {
		groups["console_scripts"] = w.Scripts
	}
	if len(w.GUIScripts) > 0 {
		groups["gui_scripts"] = w.GUIScripts
	}
	for g, m := range w.EntryPoints {
		if len(m) > 0 {
			groups[g] = m
		}
	}
	if len(groups) == 0 {
		return nil
	}
	var names []string
	for g := range groups {
		names = append(names, g)
	}
	sort.Slice(names, func(i, j int) bool { return groupRank(names[i]) < groupRank(names[j]) })
	var b strings.Builder
	for i, g := range names {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString("[" + g + "]\n")
		var keys []string
		for k := range groups[g] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			b.WriteString(k + " = " + groups[g][k] + "\n")
		}
	}
	return []byte(b.String())
}

func groupRank(g string) string {
	switch g {
	case "console_scripts":
		return "0"
	case "gui_scripts":
		return "1"
	}
	return "2" + g
}
