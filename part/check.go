package part

import (
	"bytes"
	"context"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/release"
)

// The checks of [Check], as findings name them.
const (
	// CheckRead: part.json is there and well formed.
	CheckRead = "part-read"
	// CheckFiles: the folder holds exactly the files part.json lists, with
	// their digests and sizes, and its records (artifacts.json,
	// manifest.json) read.
	CheckFiles = "part-files"
	// CheckStatement: keys are trusted (or unsigned parts allowed); the
	// part statement names this part.json and is signed by a trusted key.
	CheckStatement = "part-statement"
	// CheckRelease: the part was built from this release.toml and
	// release.lock, by this mkrelease, with the other parts' epoch.
	CheckRelease = "part-release"
	// CheckTargets: every target of release.toml is in exactly one part,
	// and no part holds another.
	CheckTargets = "part-targets"
)

// Part is a part folder, checked.
type Part struct {
	// Dir is the folder as the user named it.
	Dir string
	// Manifest is part.json; SHA256 its digest.
	Manifest *Manifest
	SHA256   string
	// Folder is the part's build output, loaded.
	Folder *dist.Release
	// Statement is the digest of the part statement ("" when the part has
	// none); KeyID the trusted key whose signature on it verified ("" when
	// none did: the part has no statement, or no key was trusted to check
	// it, and [CheckOptions.AllowUnsigned] let it in).
	Statement string
	KeyID     string
}

// Why no trusted key vouches for a part, as [Unsigned] records it.
const (
	// ReasonNoStatement: the part carries no part statement.
	ReasonNoStatement = "no part statement"
	// ReasonNotChecked: the part carries a statement, but no key was
	// trusted to check its signature.
	ReasonNotChecked = "part statement not checked: no trusted key"
)

// Verified reports whether a trusted key's signature on the part
// statement verified.
func (p *Part) Verified() bool { return p.KeyID != "" }

// CheckOptions are what parts are checked against.
type CheckOptions struct {
	// Config and Lock are the release the parts must be of.
	Config *config.Config
	Lock   *lock.Lock
	// Trusted are the keys a part statement must be signed by. Merge takes
	// no part on trust: without any, Check refuses the parts, unless
	// AllowUnsigned.
	Trusted []crypto.PublicKey
	// AllowUnsigned takes the parts no trusted key vouches for: a part
	// without a statement, and, when no key is trusted, every part (the
	// subject of its statement is checked, its signature cannot be). A
	// statement that a trusted key does not verify is refused all the
	// same: it is signed, by another key. The merged release records
	// such parts ([Unsigned]) and the default release policy refuses to
	// publish it.
	AllowUnsigned bool
}

// Check loads and checks the part folders dirs for a merge: each must be
// whole (part.json lists exactly its files) and of the release opts
// describes, built by this mkrelease, with one epoch; together they must
// hold every target of release.toml once. It returns the parts in
// release.toml's target order, or a *[finding.Error] (exit 1) listing
// every problem, each naming the part and the field. It writes nothing.
func Check(ctx context.Context, dirs []string, opts CheckOptions) ([]*Part, error) {
	rep := &finding.Report{Subject: "parts"}
	checkTrust(opts, rep)
	var parts []*Part
	for _, d := range dirs {
		p, err := load(ctx, d, opts, rep)
		if err != nil {
			return nil, err
		}
		if p != nil {
			parts = append(parts, p)
		}
	}
	checkRelease(parts, opts, rep)
	ordered := checkTargets(parts, opts.Config, rep)
	if err := rep.Err(fmt.Sprintf("merge: %d problem%s with the parts; nothing was written:", len(rep.Findings), finding.Plural(len(rep.Findings))),
		line, "build every part from the same commit (release.toml and release.lock) with the same mkrelease, one part per target, and pass each part's folder as it was built"); err != nil {
		return nil, err
	}
	return ordered, nil
}

// line renders a finding as "PART/FILE: FIELD: message".
func line(f finding.Finding) string {
	s := f.File
	if f.Member != "" {
		s += ": " + f.Member
	}
	return s + ": " + f.Msg
}

// load reads and checks one part; a part that cannot be read is reported
// and skipped (nil, nil). The error is for ctx ending or a folder that
// cannot be listed.
func load(ctx context.Context, dir string, opts CheckOptions, rep *finding.Report) (*Part, error) {
	rep.Run(CheckRead)
	at := filepath.Join(dir, dist.PartFile)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		rep.Add(finding.Finding{Check: CheckRead, File: dir, Msg: "not a folder (pass the folder mkrelease build --part wrote)"})
		return nil, nil
	}
	m, data, err := ReadManifest(dir)
	if errors.Is(err, fs.ErrNotExist) {
		rep.Add(finding.Finding{Check: CheckRead, File: at, Msg: "missing: this folder is not a part (build one with mkrelease build --target T --part --out DIR)"})
		return nil, nil
	}
	if err != nil {
		rep.Add(finding.Finding{Check: CheckRead, File: at, Msg: err.Error()})
		return nil, nil
	}
	p := &Part{Dir: dir, Manifest: m, SHA256: checksum.Bytes(data)}
	if p.Folder, err = dist.Open(ctx, dir); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		rep.Add(finding.Finding{Check: CheckFiles, File: dir, Msg: err.Error()})
		return nil, nil
	}
	checkFiles(p, rep)
	checkStatement(p, opts, rep)
	return p, nil
}

// checkTrust refuses a merge with no trusted key, unless unsigned parts
// are allowed: without a key, no part's signature can be checked, and
// taking the parts as they come would let anyone who can write a part
// folder choose the release's wheels.
func checkTrust(opts CheckOptions, rep *finding.Report) {
	rep.Run(CheckStatement)
	if len(opts.Trusted) > 0 || opts.AllowUnsigned {
		return
	}
	file := "release.toml"
	if opts.Config != nil && opts.Config.File != "" {
		file = opts.Config.File
	}
	rep.Add(finding.Finding{Check: CheckStatement, File: file, Member: "[signing] trusted_keys",
		Msg: "no trusted key to check the parts' signatures with, and merge takes no part on trust: " +
			"pass the public key of each machine that built a part (--trusted-key PUB.pem, repeatable) or list them in [signing] trusted_keys; " +
			"or accept parts no trusted key vouches for with --allow-unsigned-parts (manifest.json and the provenance record it, and the default release policy refuses to publish such a release)"})
}

// checkFiles compares the folder with part.json's list.
func checkFiles(p *Part, rep *finding.Report) {
	rep.Run(CheckFiles)
	listed := map[string]File{}
	for _, f := range p.Manifest.Files {
		listed[f.Path] = f
	}
	for _, irr := range p.Folder.Irregular {
		rep.Add(finding.Finding{Check: CheckFiles, File: filepath.Join(p.Dir, filepath.FromSlash(irr)), Msg: "not a regular file: a part holds files only"})
	}
	for _, a := range p.Folder.Files(nil) {
		if a.Path == dist.PartFile || a.Path == dist.PartStatementFile {
			continue
		}
		at := filepath.Join(p.Dir, filepath.FromSlash(a.Path))
		f, ok := listed[a.Path]
		delete(listed, a.Path)
		switch {
		case !ok:
			rep.Add(finding.Finding{Check: CheckFiles, File: at, Msg: dist.PartFile + " does not list it: remove it, or rebuild the part"})
		case f.SHA256 != a.SHA256 || f.Size != a.Size:
			rep.Add(finding.Finding{Check: CheckFiles, File: at, Want: f.SHA256, Got: a.SHA256,
				Msg: fmt.Sprintf("sha256 %s (%d bytes), %s lists %s (%d bytes): the file changed since the part was built", a.SHA256, a.Size, dist.PartFile, f.SHA256, f.Size)})
		}
	}
	for _, f := range p.Manifest.Files {
		if _, missing := listed[f.Path]; missing {
			rep.Add(finding.Finding{Check: CheckFiles, File: filepath.Join(p.Dir, filepath.FromSlash(f.Path)), Msg: "missing: " + dist.PartFile + " lists it"})
		}
	}
	for _, e := range []error{p.Folder.ListErr, p.Folder.ManifestErr} {
		if e != nil {
			rep.Add(finding.Finding{Check: CheckFiles, File: p.Dir, Msg: e.Error()})
		}
	}
}

// checkStatement checks the part statement: its subject is this
// part.json, and when keys are trusted, one of them signed it. A part
// without a statement is refused unless unsigned parts are allowed.
func checkStatement(p *Part, opts CheckOptions, rep *finding.Report) {
	trusted := opts.Trusted
	at := filepath.Join(p.Dir, dist.PartStatementFile)
	env, err := os.ReadFile(at)
	if errors.Is(err, fs.ErrNotExist) {
		if !opts.AllowUnsigned {
			rep.Add(finding.Finding{Check: CheckStatement, File: at, Msg: "missing: every part must be signed by a trusted key (build it with a [signing] key or --key), or be accepted unsigned with --allow-unsigned-parts"})
		}
		return
	}
	if err != nil {
		rep.Add(finding.Finding{Check: CheckStatement, File: at, Msg: err.Error()})
		return
	}
	p.Statement = checksum.Bytes(env)
	var payload []byte
	if len(trusted) > 0 {
		v, err := provenance.NewVerifier(trusted...)
		if err != nil {
			rep.Add(finding.Finding{Check: CheckStatement, File: at, Msg: err.Error()})
			return
		}
		if p.KeyID, payload, err = v.VerifyEnvelope(bytes.TrimSpace(env)); err != nil {
			rep.Add(finding.Finding{Check: CheckStatement, File: at, Msg: "not signed by a trusted key (" + err.Error() + "): sign every part with a key [signing] trusted_keys or --trusted-key names"})
			return
		}
	} else if payload, err = provenance.EnvelopePayload(bytes.TrimSpace(env)); err != nil {
		rep.Add(finding.Finding{Check: CheckStatement, File: at, Msg: err.Error()})
		return
	}
	var st struct {
		PredicateType string `json:"predicateType"`
		Subject       []struct {
			Name   string            `json:"name"`
			Digest map[string]string `json:"digest"`
		} `json:"subject"`
	}
	switch err := json.Unmarshal(payload, &st); {
	case err != nil:
		rep.Add(finding.Finding{Check: CheckStatement, File: at, Msg: "the statement is not JSON: " + err.Error()})
	case st.PredicateType != PredicateType:
		rep.Add(finding.Finding{Check: CheckStatement, File: at, Member: "predicateType", Want: PredicateType, Got: st.PredicateType, Msg: fmt.Sprintf("%q is not a part statement's (%s)", st.PredicateType, PredicateType)})
	case len(st.Subject) != 1 || st.Subject[0].Name != dist.PartFile || st.Subject[0].Digest["sha256"] != p.SHA256:
		got := ""
		if len(st.Subject) == 1 {
			got = st.Subject[0].Name + " " + st.Subject[0].Digest["sha256"]
		}
		rep.Add(finding.Finding{Check: CheckStatement, File: at, Member: "subject", Want: p.SHA256, Got: got,
			Msg: fmt.Sprintf("it must name %s with sha256 %s, the part's own; it names %q: the statement is another part's", dist.PartFile, p.SHA256, got)})
	}
}

// checkRelease compares each part's release facts with this release and
// with the first part's.
func checkRelease(parts []*Part, opts CheckOptions, rep *finding.Report) {
	rep.Run(CheckRelease)
	if len(parts) == 0 {
		return
	}
	first := parts[0]
	c := opts.Config
	lockSHA := ""
	if opts.Lock != nil {
		lockSHA = opts.Lock.SHA256
	}
	for _, p := range parts {
		m := p.Manifest
		at := filepath.Join(p.Dir, dist.PartFile)
		diff := func(field, got, want, what string) {
			if got != want {
				rep.Add(finding.Finding{Check: CheckRelease, File: at, Member: field, Want: want, Got: got,
					Msg: fmt.Sprintf("%s, but %s", orNone(got), what)})
			}
		}
		diff("config.release_toml_sha256", m.Config.ReleaseTOML, c.SHA256, c.File+" is "+orNone(c.SHA256)+": the part was built from another release.toml")
		diff("config.release_lock_sha256", m.Config.ReleaseLock, lockSHA, "this release.lock is "+orNone(lockSHA)+": the part was built from another lock")
		local := map[string]string{}
		for _, f := range c.MetadataFiles {
			local[f.Path] = f.SHA256
		}
		for _, path := range slices.Sorted(maps.Keys(local)) {
			diff("config.metadata_files_sha256."+path, m.Config.MetadataFiles[path], local[path], path+" is "+local[path]+": the part was built from another "+path)
		}
		diff("mkrelease", m.Mkrelease, release.ToolVersion, "this mkrelease is "+release.ToolVersion+": build and merge with one mkrelease")
		diff("project", m.Project.Name+" "+m.Project.Version, c.Project.NormalizedName+" "+c.Project.Version, "release.toml is of "+c.Project.NormalizedName+" "+c.Project.Version)
		if p != first {
			diff("source_date_epoch", fmt.Sprint(m.SourceDateEpoch), fmt.Sprint(first.Manifest.SourceDateEpoch), "part "+first.Dir+" has "+fmt.Sprint(first.Manifest.SourceDateEpoch))
			diff("toolchains", toolchains(m), toolchains(first.Manifest), "part "+first.Dir+" has "+toolchains(first.Manifest))
		}
	}
	checkShared(parts, rep)
}

func toolchains(m *Manifest) string {
	var out []string
	for _, tc := range m.Toolchains {
		out = append(out, tc.Key()+" "+tc.Version+" (sha256 "+orNone(tc.SHA256)+")")
	}
	return strings.Join(out, ", ")
}

func orNone(s string) string {
	if s == "" || s == " " {
		return "(none)"
	}
	return s
}

// checkTargets checks that the parts hold every target of c once, and
// returns them in the order of c's targets (each part once, at its first
// target).
func checkTargets(parts []*Part, c *config.Config, rep *finding.Report) []*Part {
	rep.Run(CheckTargets)
	holder := map[string]*Part{}
	for _, p := range parts {
		for _, t := range p.Manifest.Targets {
			at := filepath.Join(p.Dir, dist.PartFile)
			if _, ok := c.Target(t); !ok {
				rep.Add(finding.Finding{Check: CheckTargets, File: at, Member: "targets", Got: t,
					Msg: fmt.Sprintf("%s: release.toml declares no such target (it declares %s)", t, strings.Join(c.TargetNames(), ", "))})
				continue
			}
			if q, ok := holder[t]; ok {
				rep.Add(finding.Finding{Check: CheckTargets, File: at, Member: "targets", Got: t,
					Msg: fmt.Sprintf("%s: part %s holds it too: pass one part per target", t, q.Dir)})
				continue
			}
			holder[t] = p
		}
	}
	var ordered []*Part
	seen := map[*Part]bool{}
	var missing []string
	for _, t := range c.Targets {
		p, ok := holder[t.Name]
		if !ok {
			missing = append(missing, t.Name)
			continue
		}
		if !seen[p] {
			seen[p] = true
			ordered = append(ordered, p)
		}
	}
	for _, t := range missing {
		rep.Add(finding.Finding{Check: CheckTargets, File: "release.toml", Member: "targets", Want: t,
			Msg: fmt.Sprintf("%s: no part holds it: build it with mkrelease build --target %s --part, and pass that part too", t, t)})
	}
	return ordered
}
