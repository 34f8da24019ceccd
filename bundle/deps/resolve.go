package deps

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pep508"
	"github.com/mkrelease/mkrelease/internal/progress"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// Root is one of the release's own wheels: it is in the bundle itself, and
// its Requires-Dist are where the closure starts.
type Root struct {
	// Path is the wheel file.
	Path string
	// File is its parsed file name.
	File wheel.Filename
	// SHA256 and Size describe the file's bytes.
	SHA256 string
	Size   int64

	info *wheelInfo
}

// LoadOwn is LoadRoot for a wheel mkrelease has just written, whose
// digest and size are known: it reads only the metadata and license files,
// without checking the wheel again.
func LoadOwn(path, sha256 string, size int64) (Root, error) {
	info, err := readOwnWheel(path)
	if err != nil {
		return Root{}, fmt.Errorf("release wheel %s: %w", path, err)
	}
	return Root{Path: path, File: info.fn, SHA256: sha256, Size: size, info: info}, nil
}

// LoadRoot reads one of the release's own wheels: it checks it (see
// wheel.Check; damage, unsafe members and RECORD mismatches are errors)
// and reads its metadata.
func LoadRoot(path string) (Root, error) {
	d, size, err := checksum.File(path)
	if err != nil {
		return Root{}, fmt.Errorf("release wheel: %w", err)
	}
	info, err := readWheel(path)
	if err != nil {
		return Root{}, fmt.Errorf("release wheel %s: %w", path, err)
	}
	return Root{Path: path, File: info.fn, SHA256: d, Size: size, info: info}, nil
}

// Name returns the root's normalised project name.
func (r Root) Name() string { return pyname.Normalize(r.File.Distribution) }

// Metadata returns the root's parsed core metadata.
func (r Root) Metadata() *wheel.Metadata { return r.info.meta }

// Resolved is one package of a bundle: one of the release's own wheels or
// a locked dependency, with the wheels the target needs.
type Resolved struct {
	// Name is the normalised project name; Version the normalised
	// version.
	Name, Version string
	// Own is set for the release's own wheels.
	Own bool
	// Marker says where the package is installed: the lock entry's
	// marker, and a python_version condition when the package is needed on
	// only some of the target's Pythons; nil when it is needed everywhere.
	// The requirements.txt and pylock.toml writers copy it, so that pip
	// installs each line only where the closure needs it.
	Marker *pep508.Marker
	// Files are the package's wheels the target needs (one per distinct
	// wheel chosen over the target's Pythons), sorted by name.
	Files []File
	// Pythons are the target's Pythons the package is needed on.
	Pythons []string
	// Requires are the normalised names of the packages it requires on
	// the target; RequiredBy the names of those requiring it. Both sorted.
	Requires, RequiredBy []string
	// Summary, RequiresPython, License, People and LicenseFiles come from
	// the core metadata and .dist-info of the first file, for the SBOM and
	// the license inventory.
	Summary        string
	RequiresPython string
	License        License
	People         People
	LicenseFiles   []LicenseFile
	// Index is the simple repository the lock says the package came from
	// ("" when unknown).
	Index string
	// Lock locates the lock entry ("" for the release's own wheels).
	Lock string
}

// Finding is a warning about a resolution: something that does not stop
// the bundle but deserves a look.
type Finding struct {
	// Kind is one of "unused", "not-for-target", "own-locked", "extra",
	// "yanked", "metadata-hint", "wheel", "requires-python", "lock-note".
	Kind string
	// Package is the normalised name it is about, if any.
	Package string
	// Msg says what was found and what it means.
	Msg string
}

// String renders the finding as "kind: package: msg".
func (f Finding) String() string {
	if f.Package == "" {
		return f.Kind + ": " + f.Msg
	}
	return f.Kind + ": " + f.Package + ": " + f.Msg
}

// Closure is the resolved set of wheels a target's bundle holds.
type Closure struct {
	// Target is what was resolved for.
	Target Target
	// Own are the release's own wheels, sorted by name.
	Own []Resolved
	// Packages are the dependencies, sorted by name then version.
	Packages []Resolved
	// Findings are warnings, in a stable order.
	Findings []Finding
}

// Resolve computes and checks the dependency closure of the release's own
// wheels roots for target, using only the packages lock pins and the files
// finder fetches. See the package documentation for the rules. Every
// problem found is reported: the error is a *ResolveError listing a
// *RefusalError for each (use errors.As), or another error when resolution
// could not run (bad target, canceled context).
func Resolve(ctx context.Context, roots []Root, lock *Lock, finder *Finder, target Target) (*Closure, error) {
	if lock == nil || finder == nil {
		return nil, errors.New("resolve: lock and finder are required")
	}
	if len(roots) == 0 {
		return nil, errors.New("resolve: no release wheels given")
	}
	tags, err := TargetTags(target.Pythons, target.Platform)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", target.label(), err)
	}
	r := &resolver{
		ctx: ctx, lock: lock, finder: finder, target: target, tags: tags,
		roots:     map[string]*Root{},
		byName:    map[string][]int{},
		searches:  map[int]*pkgSearch{},
		wheels:    map[string]*wheelInfo{},
		wheelErrs: map[string]error{},
		refusals:  map[string]*RefusalError{},
		used:      map[string]*usage{},
		fetched:   progress.FromContext(ctx).Start("closure "+target.label()+": wheels", 0, progress.Items),
	}
	defer r.fetched.Done()
	for i := range roots {
		rt := &roots[i]
		if rt.info == nil {
			return nil, fmt.Errorf("resolve: release wheel %s was not loaded with LoadRoot or LoadOwn", rt.Path)
		}
		if _, dup := r.roots[rt.Name()]; dup {
			return nil, fmt.Errorf("resolve: two release wheels named %s", rt.Name())
		}
		r.roots[rt.Name()] = rt
	}
	for i, p := range lock.Packages {
		r.byName[p.Name] = append(r.byName[p.Name], i)
	}
	for _, py := range tags.Pythons() {
		if err := r.python(py); err != nil {
			return nil, err
		}
	}
	if len(r.refusals) > 0 {
		list := slices.Collect(maps.Values(r.refusals))
		slices.SortFunc(list, func(a, b *RefusalError) int {
			return cmp.Or(strings.Compare(a.Package, b.Package), strings.Compare(a.RequiredBy, b.RequiredBy),
				strings.Compare(a.Requirement, b.Requirement), strings.Compare(string(a.Kind), string(b.Kind)))
		})
		return nil, &ResolveError{Target: target.label(), Refusals: list}
	}
	return r.closure(), nil
}

// resolver holds the state of one Resolve call.
type resolver struct {
	ctx       context.Context
	lock      *Lock
	finder    *Finder
	target    Target
	tags      Tags
	roots     map[string]*Root
	byName    map[string][]int
	searches  map[int]*pkgSearch
	wheels    map[string]*wheelInfo // by sha256
	wheelErrs map[string]error
	refusals  map[string]*RefusalError
	used      map[string]*usage // by node key: "root:NAME" or "lock:INDEX"
	findings  []Finding
	// fetched counts the distinct wheels fetched, for the progress display.
	fetched *progress.Task
}

// usage aggregates what one package is used for over the Pythons.
type usage struct {
	root       *Root
	lockIndex  int
	files      map[string]File // by sha256
	infos      map[string]*wheelInfo
	pythons    map[string]bool
	requires   map[string]bool
	requiredBy map[string]bool
}

// node is a package chosen for one Python.
type node struct {
	key    string
	name   string
	file   string // wheel file name, for messages
	info   *wheelInfo
	extras map[string]bool
}

// demand is a requirement to satisfy for one Python.
type demand struct {
	req  pep508.Requirement
	text string
	from *node
}

func (r *resolver) refuse(e *RefusalError, py string) {
	e.Target = r.target.label()
	key := strings.Join([]string{string(e.Kind), e.Package, e.Requirement, e.RequiredBy}, "\x00")
	if old, ok := r.refusals[key]; ok {
		if !slices.Contains(old.Pythons, py) && py != "" {
			old.Pythons = append(old.Pythons, py)
		}
		return
	}
	if py != "" {
		e.Pythons = []string{py}
	}
	r.refusals[key] = e
}

func (r *resolver) use(key string) *usage {
	u, ok := r.used[key]
	if !ok {
		u = &usage{lockIndex: -1, files: map[string]File{}, infos: map[string]*wheelInfo{},
			pythons: map[string]bool{}, requires: map[string]bool{}, requiredBy: map[string]bool{}}
		r.used[key] = u
	}
	return u
}

// python resolves the closure for one Python; refusals are collected.
func (r *resolver) python(py string) error {
	envs, err := machineEnvs(r.target.Platform, py)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", r.target.label(), err)
	}
	if r.lock.RequiresPython != nil {
		if ok, _ := pythonSatisfies(*r.lock.RequiresPython, py); !ok {
			r.refuse(&RefusalError{Kind: KindLock, Detail: fmt.Sprintf("the lock %s has requires-python %q", r.lock.File, r.lock.RequiresPython.String()),
				Remedy: "lock for every Python of the target, or narrow the target's Pythons"}, py)
		}
	}
	if len(r.lock.Environments) > 0 {
		ok := false
		for _, m := range r.lock.Environments {
			if a, err := applies(m, envs); err == nil && a {
				ok = true
			}
		}
		if !ok {
			r.refuse(&RefusalError{Kind: KindLock, Detail: fmt.Sprintf("none of the lock %s's environments holds on this target", r.lock.File),
				Remedy: "lock for this platform too"}, py)
		}
	}
	pref := r.tags.Preference(py)
	nodes := map[string]*node{}
	var queue []demand
	expand := func(n *node, extras []string) {
		for _, text := range n.info.requiresDist {
			req, err := pep508.ParseRequirement(text)
			if err != nil {
				r.refuse(&RefusalError{Kind: KindBadWheel, Package: n.name, RequiredBy: n.file, Requirement: text,
					Detail: "invalid Requires-Dist: " + err.Error(), Remedy: "report it to the package's maintainers and lock another version"}, py)
				continue
			}
			need := false
			for _, extra := range extras {
				var envsX []pep508.Environment
				for _, env := range envs {
					envsX = append(envsX, env.WithExtra(extra))
				}
				a, err := applies(req.Marker, envsX)
				if err != nil {
					r.refuse(&RefusalError{Kind: KindMarker, Package: req.NormalizedName(), RequiredBy: n.file, Requirement: req.String(),
						Detail: err.Error(), Remedy: "the marker cannot be evaluated for the target; lock another version"}, py)
					need = false
					break
				}
				need = need || a
			}
			if need {
				queue = append(queue, demand{req: req, text: req.String(), from: n})
			}
		}
	}
	// The release's own wheels are chosen from the start.
	for _, name := range slices.Sorted(maps.Keys(r.roots)) {
		rt := r.roots[name]
		n := &node{key: "root:" + name, name: name, file: rt.File.String(), info: rt.info, extras: map[string]bool{"": true}}
		nodes[name] = n
		u := r.use(n.key)
		u.root = rt
		u.pythons[py] = true
		if _, ok := r.tags.Rank(py, rt.File); !ok {
			r.refuse(&RefusalError{Kind: KindNoFit, Package: name, RequiredBy: rt.File.String(),
				Detail: fmt.Sprintf("the release's own wheel does not install on this Python (its tags: %s; %s)", strings.Join(rt.File.Tags(), ", "), r.describeTags(py)),
				Remedy: "build the wheel for the target's Pythons, or narrow the target's Pythons"}, py)
		}
		r.checkRequiresPython(n, rt.info, py, "")
		expand(n, []string{""})
	}
	for len(queue) > 0 {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		d := queue[0]
		queue = queue[1:]
		r.satisfy(d, py, pref, envs, nodes, expand)
	}
	return nil
}

// satisfy finds the package for one demand and, when it is new (or asked
// for with new extras), queues its own requirements.
func (r *resolver) satisfy(d demand, py string, pref Preference, envs []pep508.Environment, nodes map[string]*node, expand func(*node, []string)) {
	name := d.req.NormalizedName()
	refusal := func(kind Kind, detail, remedy string, err error) {
		r.refuse(&RefusalError{Kind: kind, Package: name, Requirement: d.text, RequiredBy: d.from.file, Detail: detail, Remedy: remedy, Err: err}, py)
	}
	if d.req.URL != "" {
		refusal(KindUnsupported, "a direct reference (name @ URL) cannot be satisfied from a lock",
			"depend on a released version instead, and lock it", nil)
		return
	}
	edge := func(n *node) {
		r.use(d.from.key).requires[n.name] = true
		r.use(n.key).requiredBy[d.from.name] = true
	}
	addExtras := func(n *node) {
		var fresh []string
		for _, e := range d.req.Extras {
			if !n.extras[e] {
				n.extras[e] = true
				fresh = append(fresh, e)
				if !slices.Contains(n.info.meta.ProvidesExtra, e) && !slices.ContainsFunc(n.info.meta.ProvidesExtra, func(p string) bool { return pyname.Normalize(p) == e }) {
					r.findings = append(r.findings, Finding{Kind: "extra", Package: n.name,
						Msg: fmt.Sprintf("%s asks for extra %q, which %s does not provide (pip ignores it with a warning)", d.from.file, e, n.file)})
				}
			}
		}
		if len(fresh) > 0 {
			expand(n, fresh)
		}
	}
	if rt, ok := r.roots[name]; ok {
		n := nodes[name]
		v, err := pep440.Parse(rt.File.Version)
		if err != nil || !d.req.Specifier.Contains(v, true) {
			refusal(KindVersion, fmt.Sprintf("the release's own %s is version %s", rt.File, rt.File.Version),
				"make the release's wheels agree on each other's versions", nil)
			return
		}
		edge(n)
		addExtras(n)
		return
	}
	var apply []int
	for _, i := range r.byName[name] {
		a, err := applies(r.lock.Packages[i].Marker, envs)
		if err != nil {
			refusal(KindMarker, fmt.Sprintf("the marker of %s cannot be evaluated: %v", r.lock.Packages[i].Where, err), "fix the lock's marker", err)
			return
		}
		if a {
			apply = append(apply, i)
		}
	}
	switch len(apply) {
	case 0:
		if len(r.byName[name]) > 0 {
			var entries []string
			for _, i := range r.byName[name] {
				entries = append(entries, r.lock.Packages[i].String())
			}
			refusal(KindMissing, fmt.Sprintf("the lock %s has %s, but its marker excludes this target", r.lock.File, strings.Join(entries, "; ")),
				"lock the package for this platform and Python", nil)
			return
		}
		refusal(KindMissing, fmt.Sprintf("%s is not in the lock %s", name, r.lock.File),
			fmt.Sprintf("add %s with its wheels and hashes to the lock (e.g. pip-compile --generate-hashes, or pip download + pip hash)", name), nil)
		return
	case 1:
	default:
		var entries []string
		for _, i := range apply {
			entries = append(entries, fmt.Sprintf("%s (%s)", r.lock.Packages[i].String(), r.lock.Packages[i].Where))
		}
		refusal(KindAmbiguous, fmt.Sprintf("more than one locked candidate applies: %s", strings.Join(entries, "; ")),
			"keep one entry, or give the entries markers that exclude each other", &AmbiguousError{Package: name, Candidates: entries})
		return
	}
	idx := apply[0]
	p := r.lock.Packages[idx]
	v, _ := pep440.Parse(p.Version)
	if !d.req.Specifier.Contains(v, true) {
		refusal(KindVersion, fmt.Sprintf("the lock pins %s %s (%s), which %q does not allow", name, p.Version, p.Where, d.req.Specifier.String()),
			"lock a version the requirement allows", nil)
		return
	}
	if n, ok := nodes[name]; ok {
		edge(n)
		addExtras(n)
		return
	}
	if p.RequiresPython != nil {
		if ok, _ := pythonSatisfies(*p.RequiresPython, py); !ok {
			refusal(KindRequiresPython, fmt.Sprintf("the lock says %s %s requires Python %s", name, p.Version, p.RequiresPython.String()),
				"lock a version that supports every Python of the target, or narrow the target's Pythons", nil)
			return
		}
	}
	if p.Source != "" {
		refusal(KindUnsupported, fmt.Sprintf("the lock pins %s %s as a %s source (%s); a bundle holds wheels only", name, p.Version, p.Source, p.Where),
			"lock the package's wheels", nil)
		return
	}
	s, ok := r.searches[idx]
	if !ok {
		s = r.finder.search(p)
		r.searches[idx] = s
	}
	file, err := s.fetch(r.ctx, pref)
	if err != nil {
		if r.ctx.Err() != nil {
			refusal(KindFetch, r.ctx.Err().Error(), "", r.ctx.Err())
			return
		}
		kind, detail, remedy := r.explain(err, p, py)
		refusal(kind, detail, remedy, err)
		return
	}
	info, err := r.wheelInfo(file)
	if err != nil {
		refusal(KindBadWheel, fmt.Sprintf("%s: %v", file.Name, err), "lock another build of the package", err)
		return
	}
	if pyname.Normalize(info.meta.Name) != p.Name {
		refusal(KindBadWheel, fmt.Sprintf("%s's METADATA names %q, not %s", file.Name, info.meta.Name, p.Name), "the lock and the wheel disagree: re-lock", nil)
		return
	}
	if mv, err := pep440.Parse(info.meta.Version); err != nil || mv.String() != p.Version {
		refusal(KindBadWheel, fmt.Sprintf("%s's METADATA has version %q, not %s", file.Name, info.meta.Version, p.Version), "the lock and the wheel disagree: re-lock", nil)
		return
	}
	n := &node{key: fmt.Sprintf("lock:%d", idx), name: name, file: file.Name, info: info, extras: map[string]bool{"": true}}
	nodes[name] = n
	u := r.use(n.key)
	u.lockIndex = idx
	u.files[file.SHA256] = file
	u.infos[file.SHA256] = info
	u.pythons[py] = true
	if !r.checkRequiresPython(n, info, py, d.text) {
		return
	}
	if file.Yanked != "" {
		r.findings = append(r.findings, Finding{Kind: "yanked", Package: name, Msg: fmt.Sprintf("the index marks %s yanked: %s", file.Name, file.Yanked)})
	}
	if h := file.MetadataHint; h != "" && h != "true" && h != info.metaSHA256 {
		r.findings = append(r.findings, Finding{Kind: "metadata-hint", Package: name,
			Msg: fmt.Sprintf("the index advertises METADATA sha256 %s for %s, but the wheel's METADATA has %s; the wheel's is used", h, file.Name, info.metaSHA256)})
	}
	edge(n)
	expand(n, []string{""})
	addExtras(n)
}

// checkRequiresPython refuses a wheel whose Requires-Python excludes py.
func (r *resolver) checkRequiresPython(n *node, info *wheelInfo, py, requirement string) bool {
	rp := info.meta.RequiresPython
	if rp == "" {
		return true
	}
	spec, err := pep440.ParseSpecifiers(rp)
	if err != nil {
		r.refuse(&RefusalError{Kind: KindBadWheel, Package: n.name, RequiredBy: n.file, Requirement: requirement,
			Detail: fmt.Sprintf("invalid Requires-Python %q: %v", rp, err), Remedy: "lock another version"}, py)
		return false
	}
	ok, all := pythonSatisfies(spec, py)
	if !ok {
		r.refuse(&RefusalError{Kind: KindRequiresPython, Package: n.name, Requirement: requirement, RequiredBy: n.file,
			Detail: fmt.Sprintf("%s requires Python %s", n.file, rp),
			Remedy: "lock a version that supports every Python of the target, or narrow the target's Pythons"}, py)
		return false
	}
	if !all {
		r.findings = append(r.findings, Finding{Kind: "requires-python", Package: n.name,
			Msg: fmt.Sprintf("%s requires Python %s: only some %s releases satisfy it", n.file, rp, py)})
	}
	return true
}

// pythonSatisfies reports whether some micro release of the feature
// release py satisfies spec (checked at .0 and at a late micro release),
// and whether all do.
func pythonSatisfies(spec pep440.Specifiers, py string) (some, all bool) {
	f := featureRelease(py)
	lo, err1 := pep440.Parse(f + ".0")
	hi, err2 := pep440.Parse(f + ".9999")
	if err1 != nil || err2 != nil {
		return false, false
	}
	a, b := spec.Contains(lo, true), spec.Contains(hi, true)
	return a || b, a && b
}

// wheelInfo reads (once) the metadata of a verified wheel.
func (r *resolver) wheelInfo(f File) (*wheelInfo, error) {
	if info, ok := r.wheels[f.SHA256]; ok {
		return info, nil
	}
	if err, ok := r.wheelErrs[f.SHA256]; ok {
		return nil, err
	}
	info, err := readWheel(f.Path)
	if err != nil {
		r.wheelErrs[f.SHA256] = err
		return nil, err
	}
	// The file was verified by Fetch; make sure what was read is still it.
	if d, _, err := checksum.File(f.Path); err != nil || d != f.SHA256 {
		err := fmt.Errorf("%s changed in the cache while it was read", f.Path)
		r.wheelErrs[f.SHA256] = err
		return nil, err
	}
	r.wheels[f.SHA256] = info
	r.fetched.Add(1)
	return info, nil
}

// explain turns a Fetch error into a refusal's kind, detail and remedy.
func (r *resolver) explain(err error, p Locked, py string) (Kind, string, string) {
	var (
		sdist *SdistOnlyError
		nofit *NoWheelError
		nf    *NotFoundError
		hm    *HashMismatchError
		amb   *AmbiguousError
		fe    *FetchError
	)
	switch {
	case errors.As(err, &sdist):
		return KindSdistOnly, sdist.Error(), "lock a wheel of the package (build one and add it to find-links if the project publishes none)"
	case errors.As(err, &nofit):
		var avail []string
		for _, a := range nofit.Available {
			if fn, err := wheel.ParseFilename(a); err == nil {
				avail = append(avail, fmt.Sprintf("%s (%s)", a, strings.Join(fn.Tags(), ", ")))
			} else {
				avail = append(avail, a)
			}
		}
		detail := fmt.Sprintf("no wheel of %s %s installs here: available %s; %s", p.Name, p.Version, strings.Join(avail, ", "), r.describeTags(py))
		if len(nofit.Sdists) > 0 {
			detail += "; sdists (never used): " + strings.Join(nofit.Sdists, ", ")
		}
		return KindNoFit, detail, "lock a wheel built for this platform and Python (or a pure py3-none-any wheel)"
	case errors.As(err, &hm):
		return KindHashMismatch, hm.Error(), "the file is not the one the lock pins: check the source, or re-lock if the change is intended"
	case errors.As(err, &amb):
		return KindAmbiguous, amb.Error(), "keep one of the files in the sources, or lock only one of them"
	case errors.As(err, &nf):
		return KindNotFound, nf.Error(), "add the locked wheel to a find-links folder or the index"
	case errors.As(err, &fe):
		return KindFetch, fe.Error(), "check the source and the network (or use the cache offline)"
	}
	return KindFetch, err.Error(), ""
}

// describeTags summarises the tags Python py accepts on the target.
func (r *resolver) describeTags(py string) string {
	list := r.tags.For(py)
	if len(list) <= 4 {
		return fmt.Sprintf("target %s accepts for Python %s: %s", r.target.label(), py, strings.Join(list, ", "))
	}
	return fmt.Sprintf("target %s accepts %d tags for Python %s, best first: %s, %s, %s, ..., %s",
		r.target.label(), len(list), py, list[0], list[1], list[2], list[len(list)-1])
}

// closure assembles the result.
func (r *resolver) closure() *Closure {
	c := &Closure{Target: r.target}
	c.Target.Pythons = slices.Clone(r.target.Pythons)
	usedLock := map[int]bool{}
	for _, key := range slices.Sorted(maps.Keys(r.used)) {
		u := r.used[key]
		var res Resolved
		switch {
		case u.root != nil:
			rt := u.root
			res = Resolved{Name: rt.Name(), Version: normVersion(rt.File.Version), Own: true,
				Files: []File{{Name: rt.File.String(), Path: rt.Path, SHA256: rt.SHA256, Size: rt.Size}}}
			fillMetadata(&res, rt.info)
		case u.lockIndex >= 0:
			p := r.lock.Packages[u.lockIndex]
			usedLock[u.lockIndex] = true
			res = Resolved{Name: p.Name, Version: p.Version, Marker: p.Marker, Index: p.Index, Lock: p.Where}
			for _, f := range u.files {
				res.Files = append(res.Files, f)
			}
			slices.SortFunc(res.Files, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
			fillMetadata(&res, u.infos[res.Files[0].SHA256])
			for _, f := range res.Files {
				for _, msg := range u.infos[f.SHA256].findings {
					c.Findings = append(c.Findings, Finding{Kind: "wheel", Package: p.Name, Msg: f.Name + ": " + msg})
				}
			}
		default:
			continue
		}
		res.Pythons = slices.SortedFunc(maps.Keys(u.pythons), comparePython)
		res.Marker = andMarkers(res.Marker, pythonMarker(res.Pythons, r.tags.Pythons()))
		res.Requires = slices.Sorted(maps.Keys(u.requires))
		res.RequiredBy = slices.Sorted(maps.Keys(u.requiredBy))
		if res.Own {
			c.Own = append(c.Own, res)
		} else {
			c.Packages = append(c.Packages, res)
		}
	}
	slices.SortFunc(c.Own, compareResolved)
	slices.SortFunc(c.Packages, compareResolved)
	for i, p := range r.lock.Packages {
		if usedLock[i] {
			continue
		}
		switch {
		case r.roots[p.Name] != nil:
			c.Findings = append(c.Findings, Finding{Kind: "own-locked", Package: p.Name,
				Msg: fmt.Sprintf("the lock pins %s (%s), one of the release's own wheels: the release's wheel is used", p.String(), p.Where)})
		case !r.anyPythonApplies(p):
			c.Findings = append(c.Findings, Finding{Kind: "not-for-target", Package: p.Name,
				Msg: fmt.Sprintf("%s (%s) does not apply to target %s: not bundled", p.String(), p.Where, r.target.label())})
		default:
			c.Findings = append(c.Findings, Finding{Kind: "unused", Package: p.Name,
				Msg: fmt.Sprintf("%s (%s) is locked but nothing the release needs on target %s requires it: not bundled", p.String(), p.Where, r.target.label())})
		}
	}
	for _, n := range r.lock.Notes {
		c.Findings = append(c.Findings, Finding{Kind: "lock-note", Msg: n.String()})
	}
	c.Findings = append(c.Findings, r.findings...)
	slices.SortStableFunc(c.Findings, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Package, b.Package), strings.Compare(a.Msg, b.Msg))
	})
	c.Findings = slices.Compact(c.Findings)
	return c
}

func (r *resolver) anyPythonApplies(p Locked) bool {
	for _, py := range r.tags.Pythons() {
		envs, err := machineEnvs(r.target.Platform, py)
		if err != nil {
			return true
		}
		if a, err := applies(p.Marker, envs); err != nil || a {
			return true
		}
	}
	return false
}

func compareResolved(a, b Resolved) int {
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	va, err1 := pep440.Parse(a.Version)
	vb, err2 := pep440.Parse(b.Version)
	if err1 == nil && err2 == nil {
		if c := va.Compare(vb); c != 0 {
			return c
		}
	}
	return strings.Compare(a.Version, b.Version)
}

func normVersion(v string) string {
	if pv, err := pep440.Parse(v); err == nil {
		return pv.String()
	}
	return v
}

func fillMetadata(res *Resolved, info *wheelInfo) {
	if info == nil || info.meta == nil {
		return
	}
	res.Summary = info.meta.Summary
	res.RequiresPython = info.meta.RequiresPython
	res.License = licenseOf(info.meta)
	res.People = peopleOf(info.meta)
	res.LicenseFiles = info.licenses
}

// pythonMarker restricts a package to the Pythons need when they are not
// all of the target's; nil otherwise.
func pythonMarker(need, all []string) *pep508.Marker {
	if len(need) == 0 || len(need) == len(all) {
		return nil
	}
	var parts []string
	for _, py := range need {
		parts = append(parts, fmt.Sprintf("python_version == %q", py))
	}
	m, err := pep508.ParseMarker(strings.Join(parts, " or "))
	if err != nil {
		panic(fmt.Sprintf("deps: building a python_version marker: %v", err)) // cannot happen: "3.Y" values
	}
	return m
}

// andMarkers returns a and b (either may be nil).
func andMarkers(a, b *pep508.Marker) *pep508.Marker {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	m, err := pep508.ParseMarker("(" + a.String() + ") and (" + b.String() + ")")
	if err != nil {
		panic(fmt.Sprintf("deps: joining markers: %v", err)) // cannot happen: both print canonically
	}
	return m
}
