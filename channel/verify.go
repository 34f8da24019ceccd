package channel

import (
	"bytes"
	"cmp"
	"context"
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/fsmode"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
)

// The checks Verify runs, in order; each Finding names one.
const (
	// CheckDest: DEST is a link to a complete generation
	// (.DEST.generations/g-NNNNNN) beside it.
	CheckDest = "dest"
	// CheckState: channel.json parses (strictly), is of StateFormat,
	// names the generation DEST shows, and is consistent: normalised
	// versions ascending, newest the highest, assets sorted with valid
	// names and digests, every wheel asset described once.
	CheckState = "state"
	// CheckAsset: every asset and .metadata file channel.json lists exists
	// as a regular file with the listed sha256.
	CheckAsset = "asset"
	// CheckStray: the generation holds nothing channel.json does not
	// account for (files, links or folders).
	CheckStray = "stray"
	// CheckSidecar: every published FILE.sha256 sidecar matches its file.
	CheckSidecar = "sidecar"
	// CheckSums: each version's SHA256SUMS, when published, matches the
	// files it lists.
	CheckSums = "sha256sums"
	// CheckMetadata: every FILE.whl.metadata holds exactly the bytes of
	// the wheel's .dist-info/METADATA, whose Requires-Python channel.json
	// records.
	CheckMetadata = "core-metadata"
	// CheckSimple: simple/index.html links every project once, and each
	// project page links every wheel of its project once, each link
	// relative, its target present, its #sha256 the wheel's, its
	// data-core-metadata and data-dist-info-metadata the .metadata file's
	// digest, its data-requires-python the wheel's; each page is the one
	// channel.json implies, byte for byte.
	CheckSimple = "simple"
	// CheckFindLinks: find-links.html links every wheel once, as project
	// pages do.
	CheckFindLinks = "find-links"
	// CheckIndex: index.html's links are relative, their targets present
	// and their #sha256 fragments right, every asset linked.
	CheckIndex = "index"
	// CheckSignedState: channel.intoto.jsonl is signed by a trusted key,
	// its one subject is channel.json with channel.json's sha256, and its
	// predicate says what channel.json says (project, generation,
	// published, newest).
	CheckSignedState = "signed-state"
	// CheckRollback (with VerifyOptions.Since): the state verifies and is
	// not older than Since, nor another state under the same generation,
	// nor a newer one lacking or changing a version it records (see
	// Checkpoint.Refuses).
	CheckRollback = "rollback"
)

// VerifyOptions say what Verify trusts and what it has seen.
type VerifyOptions struct {
	// TrustedKeys may sign channel.json's statement; with none, the
	// signed state is a finding (nothing vouches for the generation).
	TrustedKeys []crypto.PublicKey
	// Since, when set, is a state of the channel seen before: a channel
	// older than it is a CheckRollback finding.
	Since *Checkpoint
}

// Finding is one problem Verify found. Its File is the file at fault, a
// slash path relative to DEST ("." for DEST itself); its Check one of the
// Check* constants. Verify renders it as "file: check: msg" (see
// [Report.Err]).
type Finding = finding.Finding

// Report is the outcome of verifying a channel.
type Report struct {
	// Dest is the channel's absolute path.
	Dest string `json:"dest"`
	// Generation is the generation folder DEST shows ("" when it shows
	// none).
	Generation string `json:"generation"`
	// Project and Versions are what channel.json says, when it parses.
	Project  string   `json:"project"`
	Versions []string `json:"versions"`
	// Findings are every problem found, sorted by file then check.
	Findings []Finding `json:"findings"`
	// Leftovers are what a killed publish left beside the generations,
	// relative to DEST's folder; they are not findings (no client sees
	// them) and the next publish removes them.
	Leftovers []string `json:"leftovers"`
	// Checkpoint is the state the channel shows, when its signed
	// statement verified (nil otherwise): what a client keeps to check the
	// channel against next time (VerifyOptions.Since).
	Checkpoint *Checkpoint `json:"checkpoint,omitempty"`
}

// OK reports whether the channel passed every check.
func (r *Report) OK() bool { return len(r.Findings) == 0 }

// Err returns nil when the channel passed, else a *[finding.Error]
// listing every finding, one per line, as "file: check: msg".
func (r *Report) Err() error {
	fr := finding.Report{Subject: r.Dest, Findings: r.Findings}
	return fr.Err(fmt.Sprintf("channel %s: %d finding(s)", r.Dest, len(r.Findings)), findingLine, "")
}

// findingLine renders a finding as "file: check: msg".
func findingLine(f Finding) string { return f.File + ": " + f.Check + ": " + f.Msg }

func (r *Report) add(file, check, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{File: file, Check: check, Msg: fmt.Sprintf(format, args...)})
}

// addCmp is add for a finding about member of file (a wheel channel.json
// lists, a page's link; "" for the file itself) that compares want with
// got.
func (r *Report) addCmp(file, check, member, want, got, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{File: file, Check: check, Member: member, Want: want, Got: got, Msg: fmt.Sprintf(format, args...)})
}

// Verify audits the channel at dest (a folder path or a file:// URL) and
// reports every finding (see the Check* constants). The error is for what
// prevents verification itself: a dest that is not a path, ctx ending,
// an I/O error that is not about one file, a trusted key that cannot be
// used. It does not check the release assets themselves (wheels, bundles,
// provenance): package audit does.
func Verify(ctx context.Context, dest string, o VerifyOptions) (*Report, error) {
	p, err := newPaths(dest)
	if err != nil {
		return nil, err
	}
	var v *provenance.Verifier
	if len(o.TrustedKeys) > 0 {
		if v, err = provenance.NewVerifier(o.TrustedKeys...); err != nil {
			return nil, err
		}
	}
	rep := &Report{Dest: p.dest, Versions: []string{}, Findings: []Finding{}, Leftovers: []string{}}
	defer rep.sort()
	root, gen := rep.checkDest(p)
	if root == "" {
		rep.checkSince(o.Since, nil)
		return rep, nil
	}
	rep.Leftovers = leftovers(p, gen)
	st, data := rep.checkState(root, gen)
	if st == nil {
		return rep, nil
	}
	rep.checkSigned(v, root, st, data)
	rep.checkSince(o.Since, rep.Checkpoint)
	if err := rep.checkFiles(ctx, root, st); err != nil {
		return nil, err
	}
	if err := rep.checkReleaseSums(ctx, root, st); err != nil {
		return nil, err
	}
	rep.checkMetadata(root, st)
	rep.checkPages(root, st)
	return rep, nil
}

// sort orders the findings by file, then check.
func (r *Report) sort() {
	slices.SortStableFunc(r.Findings, func(a, b Finding) int {
		return cmp.Or(strings.Compare(a.File, b.File), strings.Compare(a.Check, b.Check))
	})
}

// checkSigned checks channel.intoto.jsonl against channel.json (data,
// holding st) and sets r.Checkpoint when it verifies with v's keys.
func (r *Report) checkSigned(v *provenance.Verifier, root string, st *State, data []byte) {
	env, err := os.ReadFile(filepath.Join(root, SignedStateFile))
	switch {
	case err != nil:
		r.add(SignedStateFile, CheckSignedState, "%v: channel.json is not signed, so nothing vouches for its generation (a channel made by an earlier mkrelease, or tampered with); publish into a new channel", err)
		return
	case v == nil:
		r.add(SignedStateFile, CheckSignedState, "no trusted key to check it with: pass --key PUB.pem (or list it in [signing] trusted_keys)")
		return
	}
	keyID, err := verifyState(v, env, data, st)
	if err != nil {
		r.add(SignedStateFile, CheckSignedState, "%v: the channel's state does not verify; do not trust it", err)
		return
	}
	r.Checkpoint = &Checkpoint{Format: CheckpointFormat, Channel: r.Dest, KeyID: keyID}
	r.Checkpoint.fill(st, data)
}

// checkSince compares the state the channel shows (now; nil when it has
// none that verifies) with the one seen before.
func (r *Report) checkSince(since, now *Checkpoint) {
	if since == nil {
		return
	}
	if now == nil {
		// The other findings say why; the check does not pass unchecked.
		r.add(StateFile, CheckRollback, "the channel shows no state that verifies, so it was not compared with %s seen before", since.describe())
		return
	}
	for _, msg := range since.Refuses(now) {
		r.add(StateFile, CheckRollback, "%s", msg)
	}
}

// checkDest finds the generation DEST shows: its folder and number ("", 0
// when there is nothing to audit; a real folder is audited as gen 0).
func (r *Report) checkDest(p paths) (string, int) {
	fi, err := os.Lstat(p.dest)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		r.add(".", CheckDest, "%s does not exist: nothing is published there", p.dest)
		return "", 0
	case err != nil:
		r.add(".", CheckDest, "%v", err)
		return "", 0
	case fi.IsDir():
		r.add(".", CheckDest, "%s is a real folder, not a link to a generation: it cannot be updated atomically; its content is audited as is", p.dest)
		r.Generation = p.dest
		return p.dest, 0
	case fi.Mode()&fs.ModeSymlink == 0:
		r.add(".", CheckDest, "%s is a %s, not a link to a generation", p.dest, fsmode.Name(fi.Mode()))
		return "", 0
	}
	n, err := p.current()
	if ref := (*RefusedError)(nil); errors.As(err, &ref) {
		r.add(".", CheckDest, "%s", ref.Reasons[0].Msg)
		return "", 0
	} else if err != nil {
		r.add(".", CheckDest, "%v", err)
		return "", 0
	}
	root := filepath.Join(p.gens, genName(n))
	if fi, err := os.Lstat(root); err != nil || !fi.IsDir() {
		r.add(".", CheckDest, "%s links to %s, which is not a folder: the generation is gone; publish again", p.dest, root)
		return "", 0
	}
	r.Generation = root
	return root, n
}

// leftovers lists what a killed publish left.
func leftovers(p paths, gen int) []string {
	out := []string{}
	if _, err := os.Lstat(p.tmpLink); err == nil {
		out = append(out, filepath.Base(p.tmpLink))
	}
	entries, _ := os.ReadDir(p.gens)
	for _, e := range entries {
		if n := parseGenName(e.Name()); n == 0 || n > gen {
			out = append(out, filepath.Join(filepath.Base(p.gens), e.Name()))
		}
	}
	return out
}

// checkState reads channel.json and returns it with its bytes; nil when
// it cannot be read at all.
func (r *Report) checkState(root string, gen int) (*State, []byte) {
	data, err := os.ReadFile(filepath.Join(root, StateFile))
	if err != nil {
		r.add(StateFile, CheckState, "%v: the generation is incomplete or damaged", err)
		return nil, nil
	}
	st, err := parseState(data)
	if err != nil {
		r.add(StateFile, CheckState, "does not parse: %v", err)
		return nil, nil
	}
	for _, prob := range st.problems(gen) {
		r.add(StateFile, CheckState, "%s", prob)
	}
	r.Project = st.Project
	for _, v := range st.Versions {
		r.Versions = append(r.Versions, v.Version)
	}
	return st, data
}

// listedFiles returns the sha256 of every release file channel.json
// accounts for (assets and .metadata files), by slash path; names listed
// twice keep their first digest (checkState reported them).
func listedFiles(st *State) (checksum.Sums, map[string]string) {
	var sums checksum.Sums
	bySlash := map[string]string{}
	add := func(p, sha string) {
		if _, dup := bySlash[p]; !dup {
			bySlash[p] = sha
			sums = append(sums, checksum.Sum{Name: p, SHA256: sha})
		}
	}
	for _, v := range st.Versions {
		for _, a := range v.Assets {
			add(assetPath(v.Version, a.Name), a.SHA256)
		}
		for _, w := range v.Wheels {
			add(assetPath(v.Version, w.File+MetadataSuffix), w.MetadataSHA256)
		}
	}
	return sums, bySlash
}

// checkFiles checks every listed file's digest and looks for strays.
func (r *Report) checkFiles(ctx context.Context, root string, st *State) error {
	sums, _ := listedFiles(st)
	ps, err := pages(st)
	if err != nil {
		return err
	}
	ignore := []string{SignedStateFile}
	dirs := map[string]bool{".": true, ReleasesDir: true, SimpleDir: true}
	for _, pg := range ps {
		ignore = append(ignore, pg.name)
		dirs[path.Dir(pg.name)] = true
	}
	for _, v := range st.Versions {
		dirs[ReleasesDir+"/"+v.Version] = true
	}
	res, err := checksum.Verify(ctx, root, sums, checksum.VerifyOptions{Unlisted: true, Ignore: ignore})
	if err != nil {
		return fmt.Errorf("channel %s: %w", root, err)
	}
	for _, f := range res.Findings {
		if checksum.Problem(f.Check) == checksum.Unlisted {
			r.add(f.File, CheckStray, "not part of the channel: channel.json lists no such file; a channel is only changed by publishing")
			continue
		}
		r.addCmp(f.File, CheckAsset, "", f.Want, f.Got, "%s (as listed in channel.json)", f.Msg)
	}
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("channel: %w", err)
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() && !dirs[rel] {
			r.add(rel, CheckStray, "folder not part of the channel")
			return fs.SkipDir
		}
		return nil
	})
}

// checkReleaseSums checks the sidecars and SHA256SUMS of every version.
func (r *Report) checkReleaseSums(ctx context.Context, root string, st *State) error {
	for _, v := range st.Versions {
		dir := filepath.Join(root, ReleasesDir, v.Version)
		rel := func(name string) string { return assetPath(v.Version, name) }
		for _, a := range v.Assets {
			file := filepath.Join(dir, a.Name)
			switch {
			case strings.HasSuffix(a.Name, dist.SidecarSuffix):
				res, err := dist.VerifySidecar(ctx, file)
				if err != nil {
					r.add(rel(a.Name), CheckSidecar, "%v", err)
					continue
				}
				for _, f := range res.Findings {
					r.addCmp(rel(f.File), CheckSidecar, "", f.Want, f.Got, "%s (per sidecar %s)", f.Msg, a.Name)
				}
			case a.Name == dist.ChecksumsFile:
				sums, err := checksum.ReadSums(file)
				if err != nil {
					r.add(rel(a.Name), CheckSums, "%v", err)
					continue
				}
				res, err := checksum.Verify(ctx, dir, sums, checksum.VerifyOptions{})
				if err != nil {
					return fmt.Errorf("channel %s: %w", file, err)
				}
				for _, f := range res.Findings {
					r.addCmp(rel(f.File), CheckSums, "", f.Want, f.Got, "%s (per %s)", f.Msg, rel(a.Name))
				}
			}
		}
	}
	return nil
}

// checkMetadata compares every .metadata file with its wheel's METADATA
// (for wheels that checkFiles found intact).
func (r *Report) checkMetadata(root string, st *State) {
	damaged := map[string]bool{}
	for _, f := range r.Findings {
		if f.Check == CheckAsset {
			damaged[f.File] = true
		}
	}
	for _, v := range st.Versions {
		for _, w := range v.Wheels {
			whl := assetPath(v.Version, w.File)
			if damaged[whl] {
				continue // reported; its METADATA says nothing
			}
			want, err := coreMetadata(filepath.Join(root, filepath.FromSlash(whl)))
			if err != nil {
				r.add(whl, CheckMetadata, "cannot read the wheel's METADATA: %v", err)
				continue
			}
			mf := whl + MetadataSuffix
			got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(mf)))
			if err == nil && !bytes.Equal(got, want) {
				r.add(mf, CheckMetadata, "differs from the METADATA of %s: installers resolving from it would see other metadata than they install", w.File)
			}
			if sha := checksum.Bytes(want); sha != w.MetadataSHA256 {
				r.addCmp(StateFile, CheckMetadata, w.File, sha, w.MetadataSHA256, "%s: metadata_sha256 is %s, the wheel's METADATA has %s", w.File, w.MetadataSHA256, sha)
			}
			md, err := wheel.ParseMetadata(want)
			if err != nil {
				r.add(whl, CheckMetadata, "METADATA: %v", err)
			} else if md.RequiresPython != w.RequiresPython {
				r.addCmp(StateFile, CheckMetadata, w.File, md.RequiresPython, w.RequiresPython, "%s: requires_python is %q, the wheel's METADATA says %q", w.File, w.RequiresPython, md.RequiresPython)
			}
		}
	}
}

// target is a wheel as a page must link it.
type target struct {
	link wheelLink
	seen bool
}

// checkPages checks every page against channel.json and the files.
func (r *Report) checkPages(root string, st *State) {
	ps, err := pages(st)
	if err != nil {
		r.add(StateFile, CheckState, "%v", err)
		return
	}
	_, files := listedFiles(st)
	for _, pg := range ps {
		if pg.name == StateFile {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(pg.name)))
		if err != nil {
			r.add(pg.name, checkOf(pg.name), "%v: the generation is incomplete", err)
			continue
		}
		links, err := parseLinks(data)
		if err != nil {
			r.add(pg.name, checkOf(pg.name), "%v", err)
			continue
		}
		before := len(r.Findings)
		base := path.Dir(pg.name)
		switch {
		case pg.name == SimpleDir+"/index.html":
			r.checkRootLinks(pg.name, links, projects(st))
		case pg.name == IndexFile:
			r.checkIndexLinks(root, pg.name, links, st, files)
		default:
			want := map[string]*target{}
			for _, l := range wheelLinks(st) {
				if pg.name == FindLinksFile || base == SimpleDir+"/"+l.w.Project {
					want[assetPath(l.version, l.w.File)] = &target{link: l}
				}
			}
			r.checkWheelLinks(pg.name, links, want)
		}
		if len(r.Findings) == before && !bytes.Equal(data, pg.data) {
			r.add(pg.name, checkOf(pg.name), "differs from the page channel.json implies (%s); publish again to rewrite it", firstDiff(data, pg.data))
		}
	}
}

func checkOf(name string) string {
	switch {
	case name == FindLinksFile:
		return CheckFindLinks
	case name == IndexFile:
		return CheckIndex
	default:
		return CheckSimple
	}
}

// resolve returns the slash path, relative to the channel's root, that
// href on a page in folder base names, and its fragment.
func resolve(base, href string) (string, string, error) {
	u, err := url.Parse(href)
	if err != nil {
		return "", "", err
	}
	if u.Scheme != "" || u.Host != "" || strings.HasPrefix(u.Path, "/") {
		return "", "", fmt.Errorf("link %q is not relative: the channel could not be served under another URL", href)
	}
	p := path.Join(base, u.Path)
	if p == ".." || strings.HasPrefix(p, "../") {
		return "", "", fmt.Errorf("link %q leaves the channel", href)
	}
	return p, u.Fragment, nil
}

// checkRootLinks checks simple/index.html: one link per project.
func (r *Report) checkRootLinks(name string, links []link, projs []string) {
	want := map[string]bool{}
	for _, p := range projs {
		want[SimpleDir+"/"+p] = false
	}
	for _, l := range links {
		p, _, err := resolve(SimpleDir, l.href)
		if err != nil {
			r.add(name, CheckSimple, "%v", err)
			continue
		}
		seen, ok := want[p]
		switch {
		case !ok:
			r.add(name, CheckSimple, "links %q, which is not a project of the channel", l.href)
		case seen:
			r.add(name, CheckSimple, "links project %s twice", path.Base(p))
		case !strings.HasSuffix(l.href, "/") || l.text != path.Base(p):
			r.add(name, CheckSimple, "the link to project %s must be %q with the normalised name as text", path.Base(p), path.Base(p)+"/")
		}
		want[p] = true
	}
	for _, p := range projs {
		if !want[SimpleDir+"/"+p] {
			r.add(name, CheckSimple, "does not link project %s: pip cannot find it", p)
		}
	}
}

// checkWheelLinks checks a page that must link exactly the wheels in want
// (by slash path), as PEP 503/658/714 say.
func (r *Report) checkWheelLinks(name string, links []link, want map[string]*target) {
	check := checkOf(name)
	for _, l := range links {
		p, frag, err := resolve(path.Dir(name), l.href)
		if err != nil {
			r.add(name, check, "%v", err)
			continue
		}
		t, ok := want[p]
		if !ok {
			r.add(name, check, "links %s, which is not a wheel this page lists in channel.json", p)
			continue
		}
		if t.seen {
			r.add(name, check, "links %s twice", p)
		}
		t.seen = true
		w, meta := t.link.w, "sha256="+t.link.w.MetadataSHA256
		if frag != "sha256="+t.link.sha256 {
			r.addCmp(name, check, p, "sha256="+t.link.sha256, frag, "link to %s has fragment %q, want sha256=%s", p, frag, t.link.sha256)
		}
		if l.text != w.File {
			r.addCmp(name, check, p, w.File, l.text, "link to %s reads %q, want the file name", p, l.text)
		}
		for _, attr := range []string{"data-core-metadata", "data-dist-info-metadata"} {
			if got := l.attrs[attr]; got != meta {
				r.addCmp(name, check, p, meta, got, "link to %s has %s=%q, want %q (the digest of %s)", p, attr, got, meta, w.File+MetadataSuffix)
			}
		}
		if got, ok := l.attrs["data-requires-python"]; got != w.RequiresPython || ok != (w.RequiresPython != "") {
			r.addCmp(name, check, p, w.RequiresPython, got, "link to %s has data-requires-python %q, the wheel requires %q", p, got, w.RequiresPython)
		}
	}
	var missing []string
	for p, t := range want {
		if !t.seen {
			missing = append(missing, p)
		}
	}
	slices.Sort(missing)
	for _, p := range missing {
		r.add(name, check, "does not link %s: installers using this page cannot find it", p)
	}
}

// checkIndexLinks checks index.html: every link's target is in the
// channel, fragments are right, and every asset is linked.
func (r *Report) checkIndexLinks(root, name string, links []link, st *State, files map[string]string) {
	linked := map[string]bool{}
	for _, l := range links {
		p, frag, err := resolve(".", l.href)
		if err != nil {
			r.add(name, CheckIndex, "%v", err)
			continue
		}
		linked[p] = true
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(p))); err != nil {
			r.add(name, CheckIndex, "links %s, which does not exist", p)
			continue
		}
		if sha, ok := strings.CutPrefix(frag, "sha256="); ok && sha != files[p] {
			r.addCmp(name, CheckIndex, p, files[p], sha, "link to %s has sha256 %s, channel.json lists %s", p, sha, files[p])
		}
	}
	for _, v := range st.Versions {
		for _, a := range v.Assets {
			if p := assetPath(v.Version, a.Name); !linked[p] {
				r.add(name, CheckIndex, "does not link %s", p)
			}
		}
	}
}

// firstDiff describes where two texts first differ.
func firstDiff(got, want []byte) string {
	gl, wl := strings.SplitAfter(string(got), "\n"), strings.SplitAfter(string(want), "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d is %q, want %q", i+1, strings.TrimSuffix(g, "\n"), strings.TrimSuffix(w, "\n"))
		}
	}
	return "same lines"
}
