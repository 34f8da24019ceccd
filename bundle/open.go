package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/bundle/deps"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/extract"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/testhook"
	"github.com/mkrelease/mkrelease/wheel"
)

// The checks of a bundle, in the order they run.
const (
	CheckSidecar      = "sidecar"      // FILE.sha256 beside the bundle matches it (when present)
	CheckArchive      = "archive"      // safe extraction: no traversal, links, devices, duplicates, bombs
	CheckLayout       = "layout"       // one root folder named like the file, the required files present
	CheckSums         = "sha256sums"   // every file matches SHA256SUMS, no file unlisted
	CheckWheels       = "wheels"       // every wheel passes the wheel validator
	CheckManifest     = "manifest"     // manifest.json names the bundle's target and boundary, and exactly its wheels
	CheckRequirements = "requirements" // requirements.txt is exactly what mkrelease writes for the bundle's wheels
	CheckPylock       = "pylock"       // pylock.toml is exactly what mkrelease writes for the bundle's wheels
	CheckInstaller    = "installer"    // install.sh and INSTALL.md are exactly what mkrelease writes for the bundle
)

// Finding is one failed check of a bundle, naming the file at fault (and,
// where the check compares one, the member, the wanted and the found
// value).
type Finding = finding.Finding

// Report is the outcome of checking a bundle: the checks that ran, in
// order, every finding, and warnings (facts that refuse nothing but that
// the user should hear, such as a missing sidecar). Its Subject is the
// bundle's path.
type Report struct {
	finding.Report
}

// MarshalJSON writes the report as it always has: the bundle's path under
// "bundle", then its checks, findings and warnings.
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Bundle   string    `json:"bundle"`
		Checks   []string  `json:"checks"`
		Findings []Finding `json:"findings"`
		Warnings []string  `json:"warnings,omitempty"`
	}{r.Subject, r.Checks, r.Findings, r.Warnings})
}

// Err returns an error listing every finding, or nil. It maps to exit
// status 1.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	return &ReportError{Report: r}
}

// ReportError is a bundle that failed its checks. It unwraps to the
// report's *[finding.Error].
type ReportError struct{ Report *Report }

// reportHint is what to do about a bundle that fails its checks.
const reportHint = "the bundle is damaged or was tampered with: fetch it again and check it against its .sha256 and the release's SHA256SUMS"

// Error lists the findings.
func (e *ReportError) Error() string {
	if err := e.Unwrap(); err != nil {
		return err.Error()
	}
	return fmt.Sprintf("bundle %s failed 0 checks (0 findings):\n\thint: %s", e.Report.Subject, reportHint)
}

// Unwrap returns the report as a *[finding.Error] (nil when it has no
// finding).
func (e *ReportError) Unwrap() error {
	r := &e.Report.Report
	checks := map[string]bool{}
	for _, f := range r.Findings {
		checks[f.Check] = true
	}
	n := len(r.Findings)
	header := fmt.Sprintf("bundle %s failed %d check%s (%d finding%s):", r.Subject, len(checks), finding.Plural(len(checks)), n, finding.Plural(n))
	return r.Err(header, findingLine, reportHint)
}

// ExitCode is 1.
func (e *ReportError) ExitCode() int { return 1 }

// findingLine renders a finding as "check: file: msg" (without the file
// when there is none).
func findingLine(f Finding) string {
	if f.File == "" {
		return f.Check + ": " + f.Msg
	}
	return f.Check + ": " + f.File + ": " + f.Msg
}

// sumFinding is a finding of check about a checksum.Finding: the file it
// names, the digests it compares, its text.
func sumFinding(check string, f checksum.Finding) Finding {
	return Finding{Check: check, File: f.File, Want: f.Want, Got: f.Got, Msg: checksum.Describe(f)}
}

// Opened is a bundle extracted into a private folder and checked.
type Opened struct {
	// Root is the bundle's root folder.
	Root string
	// Manifest is its manifest.json (nil when unreadable).
	Manifest *dist.Manifest
	// Sums are the digests the bundle's SHA256SUMS lists: slash-separated
	// path below Root → sha256 (lower-case hex). They are set only when
	// the SHA256SUMS check held, every file listed having that digest and
	// no file unlisted, so they are the digests of the files under Root;
	// nil otherwise. Readers use them instead of hashing Root's files.
	Sums map[string]string
	// Wheels are the bundle's wheels, the project's (wheels/) and their
	// dependencies (dependencies/), by file name → sha256: the entries of
	// Sums directly under those folders whose names end as a wheel's.
	// They are set with Sums (nil otherwise), whatever the other checks
	// found: a caller that needs a sound bundle checks the Report too.
	Wheels map[string]string
	dir    string
	// requirements is the sha256 of requirements.txt as checked; "" when
	// a check failed, so Install refuses the bundle.
	requirements string
}

// Close removes the extracted files.
func (o *Opened) Close() error { return os.RemoveAll(o.dir) }

// Open checks the bundle at path: its sidecar (path.sha256) when present
// (a warning says when it is not), a safe extraction into a private
// temporary folder, the layout, SHA256SUMS (no unlisted file), every
// wheel, that manifest.json names exactly the bundle's wheels, that
// requirements.txt and pylock.toml are exactly what mkrelease writes for
// them (so pip can be sent nowhere outside the bundle), and that install.sh
// and INSTALL.md are exactly what mkrelease writes for the bundle. The
// report lists every finding; the error is only for failures to run the
// checks at all. The caller closes the result.
func Open(ctx context.Context, path string) (*Opened, *Report, error) {
	return OpenWith(ctx, path, OpenOptions{})
}

// OpenOptions tune [OpenWith]. The zero value is [Open].
type OpenOptions struct {
	// SHA256 (hex, either case) and Size are the bundle's digest and size,
	// when the caller already hashed it: the sidecar is compared with it
	// and the archive is not hashed again (see [dist.CheckSidecar]); the
	// report is the one hashing would give for a bundle of that digest.
	// "" hashes the bundle to check its sidecar.
	SHA256 string
	// Size, when not zero, is the bundle's size when it was hashed: a
	// bundle of another size on disk changed since, and OpenWith returns
	// an error rather than check it against a digest of other bytes.
	Size int64
}

// OpenWith is [Open] with options: a caller that already hashed the bundle
// passes its digest, so that the archive is read once, to extract it.
func OpenWith(ctx context.Context, path string, opt OpenOptions) (*Opened, *Report, error) {
	rep := &Report{finding.Report{Subject: path, Findings: []Finding{}}}
	st, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if opt.SHA256 != "" {
		if b, err := hex.DecodeString(opt.SHA256); err != nil || len(b) != sha256.Size {
			return nil, nil, fmt.Errorf("open bundle %s: the digest given for it, %q, is not a hex sha256", path, opt.SHA256)
		}
	}
	if opt.Size != 0 && st.Size() != opt.Size {
		return nil, nil, fmt.Errorf("open bundle %s: it has %d bytes, %d when it was hashed: it changed since; load the release folder again", path, st.Size(), opt.Size)
	}
	dir, err := os.MkdirTemp("", "mkrelease-bundle-")
	if err != nil {
		return nil, nil, err
	}
	o := &Opened{dir: dir}
	// Without a digest given, the bundle is hashed for its sidecar as it
	// is extracted, on another core: the sidecar vouches for the very
	// bytes extracted, read once. Its findings still come first.
	sidecar := dist.SidecarPath(path)
	_, serr := os.Stat(sidecar)
	var xopt extract.Options
	var h *checksum.Hasher
	if serr == nil && opt.SHA256 == "" {
		h = checksum.NewHasher()
		xopt.Tee = h
		testhook.Count(testhook.CountHash, path)
	}
	_, err = extract.ExtractFile(ctx, path, filepath.Join(dir, "x"), xopt)
	if serr != nil {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("no sidecar %s next to the bundle: nothing shows that %s is the file that was released; fetch its .sha256 too, or compare its sha256 with the release's SHA256SUMS",
			filepath.Base(sidecar), filepath.Base(path)))
	} else {
		digest := opt.SHA256
		if h != nil {
			// A bundle that could not be read to its end while it was
			// extracted is hashed on its own (CheckSidecar, given "").
			if sha, n := h.Sum(); n == st.Size() {
				digest = sha
			}
		}
		rep.Run(CheckSidecar)
		sr, cerr := dist.CheckSidecar(ctx, sidecar, digest)
		switch {
		case cerr != nil:
			rep.Addf(CheckSidecar, filepath.Base(sidecar), "%v", cerr)
		case !sr.OK():
			for _, f := range sr.Findings {
				rep.Add(sumFinding(CheckSidecar, f))
			}
		}
	}
	rep.Run(CheckArchive)
	if err != nil {
		var ee *extract.EntryError
		if errors.As(err, &ee) && ee.Entry != "" {
			rep.Addf(CheckArchive, ee.Entry, "%v", err)
		} else {
			rep.Addf(CheckArchive, filepath.Base(path), "%v", err)
		}
		return o, rep, nil
	}
	rep.Run(CheckLayout)
	entries, err := os.ReadDir(filepath.Join(dir, "x"))
	if err != nil {
		return o, rep, err
	}
	want, _ := dist.ArchiveRoot(filepath.Base(path))
	if len(entries) != 1 || !entries[0].IsDir() {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		found := strings.Join(names, ", ")
		rep.Add(Finding{Check: CheckLayout, Want: want + "/", Got: found, Msg: fmt.Sprintf("want one root folder %s/, found %s", want, found)})
		return o, rep, nil
	}
	o.Root = filepath.Join(dir, "x", entries[0].Name())
	if entries[0].Name() != want {
		rep.Add(Finding{Check: CheckLayout, File: entries[0].Name() + "/", Want: want + "/", Got: entries[0].Name() + "/",
			Msg: fmt.Sprintf("the root folder is not named like the bundle file (%s/)", want)})
	}
	for _, f := range []string{dist.ChecksumsFile, "requirements.txt", "pylock.toml", dist.ManifestFile, "install.sh", "INSTALL.md", dist.NotesFile, "wheels", "dependencies", "licenses/THIRD_PARTY_LICENSES.txt"} {
		if _, err := os.Stat(filepath.Join(o.Root, filepath.FromSlash(f))); err != nil {
			rep.Addf(CheckLayout, f, "missing")
		}
	}

	rep.Run(CheckSums)
	sums, err := checksum.ReadSums(filepath.Join(o.Root, dist.ChecksumsFile))
	if err != nil {
		rep.Addf(CheckSums, dist.ChecksumsFile, "%v", err)
		return o, rep, nil
	}
	vr, err := checksum.Verify(ctx, o.Root, sums, checksum.VerifyOptions{Unlisted: true, Ignore: []string{dist.ChecksumsFile}})
	if err != nil {
		return o, rep, err
	}
	for _, f := range vr.Findings {
		rep.Add(sumFinding(CheckSums, f))
	}
	if vr.OK() {
		o.Sums, o.Wheels = sumFacts(sums)
	}

	rep.Run(CheckWheels)
	var wheels []bundleWheel
	for _, sub := range []string{"wheels", "dependencies"} {
		m, _ := filepath.Glob(filepath.Join(o.Root, sub, "*"))
		for _, p := range m {
			rel := sub + "/" + filepath.Base(p)
			if !strings.HasSuffix(p, wheel.Ext) {
				rep.Addf(CheckWheels, rel, "not a wheel: a bundle installs wheels only")
				continue
			}
			sha, ok := sums.Lookup(rel)
			st, err := os.Stat(p)
			if err != nil {
				return o, rep, err
			}
			if !ok { // unlisted: SHA256SUMS reports it; hash it for the other checks
				if sha, _, err = checksum.File(p); err != nil {
					return o, rep, err
				}
			}
			w, err := newBundleWheel(rel, sha, st.Size())
			if err != nil {
				rep.Addf(CheckWheels, rel, "%v", err)
				continue
			}
			wheels = append(wheels, w)
			wr, err := wheel.Check(p)
			if err != nil {
				rep.Addf(CheckWheels, rel, "%v", err)
				continue
			}
			for _, f := range wr.Findings {
				rep.Add(Finding{Check: CheckWheels, File: rel, Member: f.Member, Msg: wheel.Describe(f)})
			}
		}
	}

	rep.Run(CheckManifest)
	data, err := os.ReadFile(filepath.Join(o.Root, dist.ManifestFile))
	var m dist.Manifest
	var tgt *deps.Target
	switch {
	case err != nil:
		rep.Addf(CheckManifest, dist.ManifestFile, "unreadable: %v", err)
	case json.Unmarshal(data, &m) != nil || m.Schema != dist.ManifestSchema:
		rep.Addf(CheckManifest, dist.ManifestFile, "not an mkrelease manifest")
	case m.Bundle == nil:
		rep.Addf(CheckManifest, dist.ManifestFile, "names no bundle target or support boundary")
	default:
		facts := checkBundleFacts(m.Bundle)
		for _, f := range facts {
			rep.Addf(CheckManifest, dist.ManifestFile, "%s", f)
		}
		if len(facts) > 0 {
			break
		}
		t := target(m.Bundle)
		tgt = &t
		for _, p := range checkContents(&m, wheels) {
			rep.Add(p.finding(CheckManifest))
		}
		o.Manifest = &m
	}

	rep.Run(CheckRequirements)
	reqs, err := os.ReadFile(filepath.Join(o.Root, "requirements.txt"))
	if err != nil {
		rep.Addf(CheckRequirements, "requirements.txt", "unreadable: %v", err)
		return o, rep, nil
	}
	pins, ps := checkRequirementsTxt(reqs, tgt, wheels)
	for _, p := range ps {
		rep.Add(p.finding(CheckRequirements))
	}

	rep.Run(CheckPylock)
	if lock, err := os.ReadFile(filepath.Join(o.Root, "pylock.toml")); err != nil {
		rep.Addf(CheckPylock, "pylock.toml", "unreadable: %v", err)
	} else {
		for _, p := range checkPylockToml(lock, tgt, pins, wheels) {
			rep.Add(p.finding(CheckPylock))
		}
	}

	if tgt == nil || len(ps) > 0 {
		return o, rep, nil // the installer is written from the manifest and the pins
	}
	rep.Run(CheckInstaller)
	script, err1 := os.ReadFile(filepath.Join(o.Root, "install.sh"))
	doc, err2 := os.ReadFile(filepath.Join(o.Root, "INSTALL.md"))
	if err := errors.Join(err1, err2); err != nil {
		rep.Addf(CheckInstaller, "install.sh", "unreadable: %v", err)
		return o, rep, nil
	}
	for _, p := range checkInstaller(bundleDocs(&m, filepath.Base(o.Root), pins, wheels, sums), script, doc) {
		rep.Add(p.finding(CheckInstaller))
	}
	if rep.OK() {
		o.requirements = checksum.Bytes(reqs)
	}
	return o, rep, nil
}

// sumFacts are the digests of a bundle whose SHA256SUMS verified: every
// listed file by path, and the wheels (of wheels/, then dependencies/, as
// the folders are read) by file name.
func sumFacts(sums checksum.Sums) (all, wheels map[string]string) {
	all, wheels = map[string]string{}, map[string]string{}
	for _, sub := range []string{"wheels", "dependencies"} {
		for _, s := range sums {
			if name, ok := strings.CutPrefix(s.Name, sub+"/"); ok && !strings.Contains(name, "/") && dist.ClaimsWheel(name) {
				wheels[name] = s.SHA256
			}
		}
	}
	for _, s := range sums {
		all[s.Name] = s.SHA256
	}
	return all, wheels
}
