package audit

import (
	"bytes"
	"crypto"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/provenance/attest"
)

// Options are what an audit trusts and compares with.
type Options struct {
	// TrustedKeys are the public keys a provenance signature may be made
	// with.
	TrustedKeys []crypto.PublicKey
	// Lock, when set, is the project's release.lock: the sources and
	// overlays the provenance records must be the locked ones.
	Lock *lock.Lock
	// Channels, when set, gives the state of each channel seen before
	// (a channel older than it fails) and keeps the state of each channel
	// that passed every check.
	Channels ChannelStates
}

// summarisedFiles are the files of dir (a channel's version folder) its
// verification summary names ([dist.Kind.Summarised]: wheels, bundles, the
// SBOM and the release notes), and any file that claims to be a wheel,
// each with its sha256, hashed once. The provenance names all of them but
// the notes ([provenanceFiles]).
func summarisedFiles(dir string) (map[string]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	files := map[string]string{}
	for _, e := range entries {
		n := e.Name()
		if c, _ := dist.Guess(n); e.IsDir() || !(c.Kind.Summarised() || dist.ClaimsWheel(n)) {
			continue
		}
		sha, _, err := checksum.File(filepath.Join(dir, n))
		if err != nil {
			return nil, err
		}
		files[n] = sha
	}
	return files, nil
}

// checkProvenance checks the signed provenance of a loaded release
// folder: the DSSE envelope (signature by a trusted key, subjects exactly
// the folder's wheels, bundles and SBOM, with the digests the folder was
// loaded with), the Sigstore bundle (the same envelope, the same checks),
// and the lock facts the statement records. It is the one provenance
// checker: verify prints its checks, publish reads its facts.
func checkProvenance(rel *dist.Release, o Options) ProvenanceFacts {
	pf := ProvenanceFacts{File: rel.Names.Provenance()}
	fail := func(check string, fs ...Finding) ProvenanceFacts {
		pf.Checks = append(pf.Checks, Check{Name: check, OK: len(fs) == 0, Findings: fs})
		if check == "provenance" {
			pf.Findings = append(pf.Findings, fs...)
		}
		return pf
	}
	var envs []dist.Artifact
	for _, a := range rel.Files(dist.TopLevel()) {
		if c, n := dist.Guess(a.Path); c.Kind == dist.KindProvenance && a.Path == n.Provenance() {
			envs = append(envs, a)
		}
	}
	if len(envs) != 1 {
		return fail("provenance", Finding{Msg: fmt.Sprintf("want one signed provenance (%s), found %d", dist.NamesOf("NAME", "VERSION").Provenance(), len(envs))})
	}
	name := envs[0].Path
	pf.Present, pf.File = true, name
	if len(o.TrustedKeys) == 0 {
		return fail("provenance", Finding{File: name, Msg: "no trusted key to check the signature with: pass --key PUB.pem (or list it in [signing] trusted_keys)"})
	}
	v, err := provenance.NewVerifier(o.TrustedKeys...)
	if err != nil {
		return fail("provenance", Finding{File: name, Msg: err.Error()})
	}
	env, err := os.ReadFile(rel.Path(envs[0]))
	if err != nil {
		return fail("provenance", Finding{File: name, Msg: err.Error()})
	}
	// The signature on its own first: a statement signed by a trusted key
	// says how the build ran even when its subjects do not match.
	if res, err := v.Verify(env, provenance.WithoutArtifactsUnsafe()); err == nil {
		pf.Signed, pf.KeyID, pf.Statement, pf.SHA256 = true, res.KeyID, res.Statement, checksum.Bytes(env)
		pf.UnsignedParts = unsignedParts(name, res.Provenance)
	}
	files := map[string]string{}
	for _, a := range rel.Files(dist.TopLevel()) {
		if a.Kind.Subject() || dist.ClaimsWheel(a.Path) {
			files[a.Path] = a.SHA256
		}
	}
	res, err := v.Verify(env, provenance.WithArtifacts(files))
	fail("provenance", verifyFindings(name, err)...)
	pf.SubjectsMatch = err == nil

	_, names := dist.Guess(name)
	bundle, ok := rel.File(names.ProvenanceBundle())
	switch {
	case !ok:
		fail("provenance-bundle", Finding{Msg: fmt.Sprintf("no Sigstore bundle (%s)", dist.NamesOf("NAME", "VERSION").ProvenanceBundle())})
	default:
		data, err := os.ReadFile(rel.Path(bundle))
		if err != nil {
			fail("provenance-bundle", Finding{File: bundle.Path, Msg: err.Error()})
			break
		}
		bres, err := v.VerifyBundle(data, provenance.WithArtifacts(files))
		fs := verifyFindings(bundle.Path, err)
		if err == nil && res != nil && !bytes.Equal(bres.Statement, res.Statement) {
			fs = append(fs, Finding{File: bundle.Path, Msg: "carries another statement than " + name})
		}
		fail("provenance-bundle", fs...)
	}
	if o.Lock != nil && res != nil {
		fail("provenance-lock", lockFindings(name, res.Provenance, o.Lock)...)
	}
	return pf
}

func verifyFindings(file string, err error) []Finding {
	if err == nil {
		return nil
	}
	var out []Finding
	for _, e := range unjoin(err) {
		var ve *provenance.VerifyError
		if errors.As(e, &ve) && ve.Name != "" {
			out = append(out, Finding{File: ve.Name, Want: ve.Expected, Got: ve.Actual, Msg: fmt.Sprintf("%s: %s", file, e.Error())})
			continue
		}
		out = append(out, Finding{File: file, Msg: e.Error()})
	}
	return out
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unjoin(e)...)
		}
		return out
	}
	return []error{err}
}

// lockFindings compares the sources and overlays the provenance records
// with release.lock.
func lockFindings(file string, p provenance.Provenance, l *lock.Lock) []Finding {
	var out []Finding
	if got, ok := p.ExternalParameters["release_lock_sha256"].(string); ok && got != l.SHA256 {
		out = append(out, Finding{File: lock.DefaultFile, Msg: fmt.Sprintf("%s was built with a release.lock of sha256 %s; this one has %s", file, got, l.SHA256)})
	}
	seen := map[string]bool{}
	for _, d := range p.ResolvedDependencies {
		switch {
		case strings.HasPrefix(d.Name, "source:"):
			name := strings.TrimPrefix(d.Name, "source:")
			seen[d.Name] = true
			s, ok := l.Source(name)
			if !ok {
				out = append(out, Finding{File: file, Msg: "records source " + name + ", which release.lock does not lock"})
				continue
			}
			want, _ := provenance.DirHash(s.Tree)
			for k, v := range want {
				if d.Digest[k] != v {
					out = append(out, Finding{File: file, Msg: fmt.Sprintf("source %s: tree %s=%s, release.lock has %s", name, k, d.Digest[k], v)})
				}
			}
			if s.Commit != "" && d.Digest["gitCommit"] != s.Commit {
				out = append(out, Finding{File: file, Msg: fmt.Sprintf("source %s: commit %s, release.lock has %s", name, d.Digest["gitCommit"], s.Commit)})
			}
			if s.SHA256 != "" && d.Digest["sha256"] != s.SHA256 {
				out = append(out, Finding{File: file, Msg: fmt.Sprintf("source %s: archive sha256 %s, release.lock has %s", name, d.Digest["sha256"], s.SHA256)})
			}
		case strings.HasPrefix(d.Name, "overlay:"):
			name := strings.TrimPrefix(d.Name, "overlay:")
			seen[d.Name] = true
			o, ok := l.Overlay(name)
			if !ok {
				out = append(out, Finding{File: file, Msg: "records overlay " + name + ", which release.lock does not lock"})
				continue
			}
			if sha, isPatch := strings.CutPrefix(o.Digest, "sha256:"); isPatch && d.Digest["sha256"] != sha {
				out = append(out, Finding{File: file, Msg: fmt.Sprintf("overlay %s: sha256 %s, release.lock has %s", name, d.Digest["sha256"], sha)})
			}
		}
	}
	for _, s := range l.Sources {
		if !seen["source:"+s.Name] {
			out = append(out, Finding{File: file, Msg: "does not record source " + s.Name + ", which release.lock locks"})
		}
	}
	for _, o := range l.Overlays {
		if !seen["overlay:"+o.Name] {
			out = append(out, Finding{File: file, Msg: "does not record overlay " + o.Name + ", which release.lock locks"})
		}
	}
	return out
}

// ProvenanceFacts is what checking a folder's signed provenance
// established, as a policy gate reads it.
type ProvenanceFacts struct {
	// Present says there is exactly one provenance statement; File is
	// its name (or the name expected when there is none).
	Present bool
	File    string
	// Signed says its envelope verifies with a trusted key, KeyID's.
	Signed bool
	KeyID  string
	// SubjectsMatch says its subjects are exactly the folder's wheels,
	// bundles and SBOM, digest for digest.
	SubjectsMatch bool
	// Statement is the signed statement's bytes and SHA256 their digest
	// (set when Signed).
	Statement []byte
	SHA256    string
	// UnsignedParts are the parts of a merged release that no trusted key
	// vouched for (mkrelease merge --allow-unsigned-parts), as the signed
	// statement records them (set only when Signed; see [unsignedParts]).
	UnsignedParts []dist.ManifestPart
	// Findings say what did not hold about the statement itself (the
	// provenance check's findings), as a policy quotes them.
	Findings []Finding
	// Checks are the checks verify reports: provenance,
	// provenance-bundle and, given a lock, provenance-lock.
	Checks []Check
}

// Warnings say what the signed provenance vouches for without a trusted
// signature behind it: each part of a merged release that no trusted key
// vouched for. The statement verifies, so verify does not fail on them;
// the default release policy refuses to publish such a release
// ([build.parts_signed]).
func (pf ProvenanceFacts) Warnings() []string {
	var out []string
	for _, u := range pf.UnsignedParts {
		what := "a part"
		if len(u.Targets) > 0 {
			what = "the part of " + strings.Join(u.Targets, ", ") + " (part.json sha256 " + u.PartSHA256 + ")"
		}
		out = append(out, fmt.Sprintf("%s: %s was merged without a trusted signature (%s), with mkrelease merge --allow-unsigned-parts: nothing shows who built it, and the default release policy refuses to publish it",
			pf.File, what, u.Reason))
	}
	return out
}

// unsignedParts reads the parts a merged release's provenance (file)
// records as taken without a trusted signature: its
// buildDefinition.internalParameters.unsigned_parts, a list of
// {"targets", "part_sha256", "reason"}. None when there is no such record;
// a record that is not of that shape is one part, its reason saying what
// is wrong, so that it is never read as "every part signed".
func unsignedParts(file string, p provenance.Provenance) []dist.ManifestPart {
	raw, ok := p.InternalParameters[attest.UnsignedPartsParameter]
	if !ok {
		return nil
	}
	malformed := func(why string) []dist.ManifestPart {
		return []dist.ManifestPart{{Targets: []string{}, Reason: file + ": buildDefinition.internalParameters." + attest.UnsignedPartsParameter + " " + why}}
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return malformed("cannot be read: " + err.Error())
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var parts []dist.ManifestPart
	if err := dec.Decode(&parts); err != nil {
		return malformed("is malformed: " + err.Error())
	}
	if len(parts) == 0 {
		return malformed("is present but lists no part")
	}
	for i, u := range parts {
		if len(u.Targets) == 0 || u.PartSHA256 == "" || u.Reason == "" {
			return malformed(fmt.Sprintf("[%d] lacks its targets, part_sha256 or reason", i))
		}
	}
	return parts
}
