package bundle

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/extract"
	"github.com/mkrelease/mkrelease/release"
	"github.com/mkrelease/mkrelease/wheel"
)

// The checks of a bundle, in the order they run.
const (
	CheckSidecar      = "sidecar"      // FILE.sha256 beside the bundle matches it (when present)
	CheckArchive      = "archive"      // safe extraction: no traversal, links, devices, duplicates, bombs
	CheckLayout       = "layout"       // one root folder named like the file, the required files present
	CheckSums         = "sha256sums"   // every file matches SHA256SUMS, no file unlisted
	CheckWheels       = "wheels"       // every wheel passes the wheel validator
	CheckRequirements = "requirements" // requirements.txt pins exactly the bundle's wheels, by their digests
	CheckManifest     = "manifest"     // manifest.json is readable and names the bundle's target and boundary
)

// Finding is one failed check of a bundle, naming the file at fault.
type Finding struct {
	Check string `json:"check"`
	File  string `json:"file,omitempty"`
	Msg   string `json:"message"`
}

// Report is the outcome of checking a bundle: the checks that ran, in
// order, and every finding.
type Report struct {
	Bundle   string    `json:"bundle"`
	Checks   []string  `json:"checks"`
	Findings []Finding `json:"findings"`
}

// OK reports whether every check held.
func (r *Report) OK() bool { return len(r.Findings) == 0 }

// Err returns an error listing every finding, or nil. It maps to exit
// status 1.
func (r *Report) Err() error {
	if r.OK() {
		return nil
	}
	return &ReportError{Report: r}
}

// ReportError is a bundle that failed its checks.
type ReportError struct{ Report *Report }

// Error lists the findings.
func (e *ReportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "bundle %s failed %d check%s:", e.Report.Bundle, len(e.Report.Findings), plural(len(e.Report.Findings)))
	for _, f := range e.Report.Findings {
		b.WriteString("\n  " + f.Check + ": ")
		if f.File != "" {
			b.WriteString(f.File + ": ")
		}
		b.WriteString(f.Msg)
	}
	b.WriteString("\n\thint: the bundle is damaged or was tampered with: fetch it again and check it against its .sha256 and the release's SHA256SUMS")
	return b.String()
}

// ExitCode is 1.
func (e *ReportError) ExitCode() int { return 1 }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (r *Report) run(check string) { r.Checks = append(r.Checks, check) }

func (r *Report) add(check, file, format string, args ...any) {
	r.Findings = append(r.Findings, Finding{Check: check, File: file, Msg: fmt.Sprintf(format, args...)})
}

// Opened is a bundle extracted into a private folder and checked.
type Opened struct {
	// Root is the bundle's root folder.
	Root string
	// Manifest is its manifest.json (nil when unreadable).
	Manifest *release.Manifest
	dir      string
}

// Close removes the extracted files.
func (o *Opened) Close() error { return os.RemoveAll(o.dir) }

// Open checks the bundle at path: its sidecar (path.sha256) when present,
// a safe extraction into a private temporary folder, the layout,
// SHA256SUMS (no unlisted file), every wheel and requirements.txt. The
// report lists every finding; the error is only for failures to run the
// checks at all. The caller closes the result.
func Open(ctx context.Context, path string) (*Opened, *Report, error) {
	rep := &Report{Bundle: path, Findings: []Finding{}}
	if _, err := os.Stat(path); err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(checksum.SidecarPath(path)); err == nil {
		rep.run(CheckSidecar)
		sr, err := checksum.VerifySidecar(checksum.SidecarPath(path))
		switch {
		case err != nil:
			rep.add(CheckSidecar, filepath.Base(checksum.SidecarPath(path)), "%v", err)
		case !sr.OK():
			for _, f := range sr.Findings {
				rep.add(CheckSidecar, f.Name, "%s", f.String())
			}
		}
	}
	dir, err := os.MkdirTemp("", "mkrelease-bundle-")
	if err != nil {
		return nil, nil, err
	}
	o := &Opened{dir: dir}
	rep.run(CheckArchive)
	if _, err := extract.ExtractFile(ctx, path, filepath.Join(dir, "x"), extract.Options{}); err != nil {
		var ee *extract.EntryError
		if errors.As(err, &ee) && ee.Entry != "" {
			rep.add(CheckArchive, ee.Entry, "%v", err)
		} else {
			rep.add(CheckArchive, filepath.Base(path), "%v", err)
		}
		return o, rep, nil
	}
	rep.run(CheckLayout)
	entries, err := os.ReadDir(filepath.Join(dir, "x"))
	if err != nil {
		return o, rep, err
	}
	want := strings.TrimSuffix(filepath.Base(path), ".tar.gz")
	if len(entries) != 1 || !entries[0].IsDir() {
		names := []string{}
		for _, e := range entries {
			names = append(names, e.Name())
		}
		rep.add(CheckLayout, "", "want one root folder %s/, found %s", want, strings.Join(names, ", "))
		return o, rep, nil
	}
	o.Root = filepath.Join(dir, "x", entries[0].Name())
	if entries[0].Name() != want {
		rep.add(CheckLayout, entries[0].Name()+"/", "the root folder is not named like the bundle file (%s/)", want)
	}
	for _, f := range []string{"SHA256SUMS", "requirements.txt", "pylock.toml", "manifest.json", "install.sh", "INSTALL.md", "RELEASE_NOTES.md", "wheels", "dependencies", "licenses/THIRD_PARTY_LICENSES.txt"} {
		if _, err := os.Stat(filepath.Join(o.Root, filepath.FromSlash(f))); err != nil {
			rep.add(CheckLayout, f, "missing")
		}
	}

	rep.run(CheckSums)
	sums, err := checksum.ReadSums(filepath.Join(o.Root, "SHA256SUMS"))
	if err != nil {
		rep.add(CheckSums, "SHA256SUMS", "%v", err)
		return o, rep, nil
	}
	vr, err := checksum.Verify(ctx, o.Root, sums, checksum.VerifyOptions{Unlisted: true, Ignore: []string{"SHA256SUMS"}})
	if err != nil {
		return o, rep, err
	}
	for _, f := range vr.Findings {
		rep.add(CheckSums, f.Name, "%s", f.String())
	}

	rep.run(CheckWheels)
	var wheels []string
	for _, sub := range []string{"wheels", "dependencies"} {
		m, _ := filepath.Glob(filepath.Join(o.Root, sub, "*"))
		for _, p := range m {
			rel := sub + "/" + filepath.Base(p)
			if !strings.HasSuffix(p, ".whl") {
				rep.add(CheckWheels, rel, "not a wheel: a bundle installs wheels only")
				continue
			}
			wheels = append(wheels, rel)
			wr, err := wheel.Check(p)
			if err != nil {
				rep.add(CheckWheels, rel, "%v", err)
				continue
			}
			for _, f := range wr.Findings {
				rep.add(CheckWheels, rel, "%s", f.String())
			}
		}
	}

	rep.run(CheckRequirements)
	checkRequirements(o.Root, wheels, sums, rep)

	rep.run(CheckManifest)
	data, err := os.ReadFile(filepath.Join(o.Root, "manifest.json"))
	var m release.Manifest
	switch {
	case err != nil:
		rep.add(CheckManifest, "manifest.json", "unreadable: %v", err)
	case json.Unmarshal(data, &m) != nil || m.Schema != release.ManifestSchema:
		rep.add(CheckManifest, "manifest.json", "not an mkrelease manifest")
	case m.Bundle == nil || len(m.Bundle.Pythons) == 0:
		rep.add(CheckManifest, "manifest.json", "names no bundle target or support boundary")
	default:
		o.Manifest = &m
	}
	return o, rep, nil
}

// checkRequirements checks that requirements.txt pins every wheel of the
// bundle by the digest SHA256SUMS records for it, and nothing else.
func checkRequirements(root string, wheels []string, sums checksum.Sums, rep *Report) {
	data, err := os.ReadFile(filepath.Join(root, "requirements.txt"))
	if err != nil {
		rep.add(CheckRequirements, "requirements.txt", "unreadable: %v", err)
		return
	}
	pinned := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		for _, f := range strings.Fields(sc.Text()) {
			if h, ok := strings.CutPrefix(f, "--hash=sha256:"); ok {
				pinned[h] = true
			}
		}
	}
	seen := map[string]bool{}
	sort.Strings(wheels)
	for _, w := range wheels {
		sha, ok := sums.Lookup(w)
		if !ok {
			continue // SHA256SUMS already reports it unlisted
		}
		seen[sha] = true
		if !pinned[sha] {
			rep.add(CheckRequirements, w, "not pinned in requirements.txt (pip --require-hashes would refuse the install)")
		}
	}
	var extra []string
	for h := range pinned {
		if !seen[h] {
			extra = append(extra, h)
		}
	}
	sort.Strings(extra)
	for _, h := range extra {
		rep.add(CheckRequirements, "requirements.txt", "pins sha256:%s, which no wheel of the bundle has", h)
	}
}
