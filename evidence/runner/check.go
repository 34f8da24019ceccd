package runner

import (
	"bufio"
	"bytes"
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/evidence"
	"github.com/mkrelease/mkrelease/evidence/sanitize"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/extract"
	"github.com/mkrelease/mkrelease/internal/finding"
	"github.com/mkrelease/mkrelease/internal/workdir"
	"github.com/mkrelease/mkrelease/provenance"
)

// The checks of evidence, in the order they run.
const (
	CheckSidecar    = "sidecar"
	CheckArchive    = "archive"
	CheckSums       = "sha256sums"
	CheckSanitised  = "sanitised"
	CheckRecords    = "records"
	CheckStore      = "store"
	CheckAggregates = "aggregates"
	CheckIdentity   = "identity"
	CheckSignature  = "signature"
)

// CheckOptions say what evidence must match.
type CheckOptions struct {
	// TrustedKeys may sign the evidence statements.
	TrustedKeys []crypto.PublicKey
	// Wheels are the exact wheels (file name → sha256) the evidence must
	// be for: those of the target's bundle ([BundleWheels]), its pair and
	// its closure. The run identity must name every one with that digest,
	// and no other. None (a caller that could not read the bundle) is a
	// finding: nothing then shows which wheels the evidence is for.
	Wheels map[string]string
	// Private is what must not appear in it (default: this machine's).
	Private *sanitize.Private
	// ArchiveSHA256 (hex, either case) and ArchiveSize are the archive's
	// digest and size, when the caller already hashed it: the sidecar and
	// the signed statements are compared with it and the archive is not
	// hashed again (see [dist.CheckSidecar]); the report is the one
	// hashing would give for an archive of that digest. "" hashes the
	// archive.
	ArchiveSHA256 string
	// ArchiveSize, when not zero, is the archive's size when it was
	// hashed: an archive of another size on disk changed since, and Check
	// returns an error rather than check it against a digest of other
	// bytes.
	ArchiveSize int64
}

// Finding is one failed check of evidence, naming the file at fault (and,
// where the check compares one, the member, the wanted and the found
// value).
type Finding = finding.Finding

// Report is the outcome of checking evidence. Its Subject is the
// archive's path; it has no warnings.
type Report struct {
	finding.Report
	// KeyID is the trusted key whose signature verified the statements
	// (provenance.KeyID), "" when none did.
	KeyID string `json:"key_id,omitempty"`
	// Manifest and Summary (recomputed from the records) when readable.
	Manifest *Manifest `json:"-"`
	Summary  *Summary  `json:"-"`
	// Cases and Measurements are the raw records the summary was
	// recomputed from, as read from the archive (every worker attempt,
	// its step times included), when readable.
	Cases        []evidence.Case        `json:"-"`
	Measurements []evidence.Measurement `json:"-"`
}

// MarshalJSON writes the report as mkrelease evidence import --json always
// has: the archive's path under "archive", the checks, the findings and
// the key.
func (r Report) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Archive  string    `json:"archive"`
		Checks   []string  `json:"checks"`
		Findings []Finding `json:"findings"`
		KeyID    string    `json:"key_id,omitempty"`
	}{r.Subject, r.Checks, r.Findings, r.KeyID})
}

// Err lists the findings, or returns nil; the error is a
// *[finding.Error], which maps to exit status 1.
func (r *Report) Err() error {
	n := len(r.Findings)
	return r.Report.Err(fmt.Sprintf("evidence %s refused (%d finding%s):", filepath.Base(r.Subject), n, finding.Plural(n)), findingLine, "")
}

// findingLine renders a finding as "check: file: msg" (without the file
// when there is none).
func findingLine(f Finding) string {
	if f.File == "" {
		return f.Check + ": " + f.Msg
	}
	return f.Check + ": " + f.File + ": " + f.Msg
}

// lineOf names line n of a file, as a finding's member.
func lineOf(n int) string { return fmt.Sprintf("line %d", n) }

// Check checks an evidence archive: its sidecar, a safe extraction, its
// SHA256SUMS, that no file holds a private value or a credential, the raw
// records, the store (integrity, and row for row the same as the records),
// every aggregate recomputed from the records against the summaries it
// carries (the recomputed values are the ones returned), the run identity
// against the wheels it must be for, and the signed statements beside it.
// The statements are read, not hashed: their signatures are what is
// checked. The error is for failures to run the checks at all.
func Check(ctx context.Context, archive string, o CheckOptions) (*Report, error) {
	if o.ArchiveSHA256 != "" {
		if b, err := hex.DecodeString(o.ArchiveSHA256); err != nil || len(b) != sha256.Size {
			return nil, fmt.Errorf("check evidence %s: the digest given for it, %q, is not a hex sha256", archive, o.ArchiveSHA256)
		}
	}
	if o.ArchiveSize != 0 {
		st, err := os.Stat(archive)
		if err != nil {
			return nil, fmt.Errorf("check evidence: %w", err)
		}
		if st.Size() != o.ArchiveSize {
			return nil, fmt.Errorf("check evidence %s: it has %d bytes, %d when it was hashed: it changed since; load the release folder again", archive, st.Size(), o.ArchiveSize)
		}
	}
	rep := &Report{Report: finding.Report{Subject: archive, Findings: []Finding{}}}
	base := filepath.Base(archive)
	name, _ := dist.ArchiveRoot(base) // the root folder; base itself when not a .tar.gz
	if _, err := os.Stat(dist.SidecarPath(archive)); err == nil {
		rep.Run(CheckSidecar)
		sr, err := dist.CheckSidecar(ctx, dist.SidecarPath(archive), o.ArchiveSHA256)
		if err != nil {
			rep.Addf(CheckSidecar, base+dist.SidecarSuffix, "%v", err)
		} else {
			for _, f := range sr.Findings {
				rep.Add(Finding{Check: CheckSidecar, File: base + dist.SidecarSuffix, Member: f.File, Want: f.Want, Got: f.Got, Msg: checksum.Describe(f)})
			}
		}
	}
	scratch, _, err := workdir.Scratch(checkScratchPrefix)
	if scratch == nil {
		return nil, err
	}
	defer scratch.Remove()
	work := scratch.Path
	rep.Run(CheckArchive)
	if _, err := extract.ExtractFile(ctx, archive, filepath.Join(work, "x"), extract.Options{}); err != nil {
		rep.Addf(CheckArchive, base, "%v", err)
		return rep, nil
	}
	root := filepath.Join(work, "x", name)
	if st, err := os.Stat(root); err != nil || !st.IsDir() {
		rep.Addf(CheckArchive, base, "no root folder %s/", name)
		return rep, nil
	}

	rep.Run(CheckSums)
	sums, err := checksum.ReadSums(filepath.Join(root, dist.ChecksumsFile))
	if err != nil {
		rep.Addf(CheckSums, dist.ChecksumsFile, "%v", err)
	} else {
		vr, err := checksum.Verify(ctx, root, sums, checksum.VerifyOptions{Unlisted: true, Ignore: []string{dist.ChecksumsFile}})
		if err != nil {
			return nil, err
		}
		for _, f := range vr.Findings {
			rep.Add(Finding{Check: CheckSums, File: f.File, Want: f.Want, Got: f.Got, Msg: checksum.Describe(f)})
		}
	}

	rep.Run(CheckSanitised)
	private := sanitize.FromSystem()
	if o.Private != nil {
		private = *o.Private
	}
	hits, err := private.Scanner().ScanTree(root)
	if err != nil {
		return nil, err
	}
	for _, h := range hits {
		rep.Add(Finding{Check: CheckSanitised, Member: h.File, Msg: h.String()})
	}

	rep.Run(CheckRecords)
	var m Manifest
	if data, err := os.ReadFile(filepath.Join(root, dist.ManifestFile)); err != nil || json.Unmarshal(data, &m) != nil || m.Schema != ManifestSchema {
		rep.Addf(CheckRecords, dist.ManifestFile, "missing or not an evidence manifest")
		return rep, nil
	}
	rep.Manifest = &m
	var cases []evidence.Case
	var ms []evidence.Measurement
	var specs []LaneSpec
	for _, l := range m.Lanes {
		spec := LaneSpec{Name: l.Name, Kind: l.Kind, Warmups: l.Warmups, Workloads: l.Workloads}
		specs = append(specs, spec)
		switch l.Kind {
		case config.LaneCases:
			f := l.Name + "/cases.jsonl"
			var lc []evidence.Case
			if err := readJSONL(filepath.Join(root, filepath.FromSlash(f)), &lc); err != nil {
				rep.Addf(CheckRecords, f, "%v", err)
			}
			for i, c := range lc {
				if c.Lane != l.Name {
					rep.Add(Finding{Check: CheckRecords, File: f, Member: lineOf(i + 1), Want: l.Name, Got: c.Lane,
						Msg: fmt.Sprintf("line %d: case %s of lane %q in lane %s's file", i+1, c.ID, c.Lane, l.Name)})
				}
			}
			cases = append(cases, lc...)
		case config.LaneCrossover:
			f := l.Name + "/measurements.jsonl"
			var lm []evidence.Measurement
			if err := readJSONL(filepath.Join(root, filepath.FromSlash(f)), &lm); err != nil {
				rep.Addf(CheckRecords, f, "%v", err)
			}
			for i, x := range lm {
				if x.Lane != l.Name {
					rep.Add(Finding{Check: CheckRecords, File: f, Member: lineOf(i + 1), Want: l.Name, Got: x.Lane,
						Msg: fmt.Sprintf("line %d: measurement of lane %q in lane %s's file", i+1, x.Lane, l.Name)})
				}
			}
			ms = append(ms, lm...)
		default:
			rep.Addf(CheckRecords, dist.ManifestFile, "lane %s has unknown kind %q", l.Name, l.Kind)
		}
	}

	rep.Cases, rep.Measurements = cases, ms

	rep.Run(CheckStore)
	var run store.Run
	st, err := store.Open(filepath.Join(root, StoreFile))
	if err != nil {
		rep.Addf(CheckStore, StoreFile, "%v", err)
	} else {
		if err := st.IntegrityCheck(); err != nil {
			rep.Addf(CheckStore, StoreFile, "%v", err)
		}
		for _, f := range store.Agree(st, cases, ms) {
			rep.Addf(CheckStore, StoreFile, "%s", f.String())
		}
		if run, err = st.Run(); err != nil {
			rep.Addf(CheckStore, StoreFile, "%v", err)
		}
		st.Close()
	}

	rep.Run(CheckAggregates)
	sum, err := RecomputeSpecs(specs, cases, ms)
	if err != nil {
		rep.Addf(CheckAggregates, "", "the records do not make a complete run: %v", err)
	} else {
		rep.Summary = sum
		compareSummary(rep, root, "summary.json", sum)
		for _, l := range sum.Lanes {
			compareSummary(rep, root, l.Name+"/summary.json", l)
		}
	}

	rep.Run(CheckIdentity)
	ident, _ := run.CanonicalIdentity()
	var manifestIdent bytes.Buffer
	if len(ident) > 0 && (json.Compact(&manifestIdent, m.Identity) != nil || !bytes.Equal(ident, manifestIdent.Bytes())) {
		rep.Addf(CheckIdentity, dist.ManifestFile, "the run identity differs from the store's")
	}
	checkWheels(rep, run, o.Wheels, base)

	rep.Run(CheckSignature)
	checkStatements(rep, archive, strings.ToLower(o.ArchiveSHA256), run, o.TrustedKeys, sum)
	return rep, nil
}

func readJSONL[T any](path string, out *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var v T
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		*out = append(*out, v)
	}
	return sc.Err()
}

// compareSummary reports a summary file that says something else than the
// records: the recomputed value wins.
func compareSummary(rep *Report, root, file string, want any) {
	got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(file)))
	if err != nil {
		rep.Addf(CheckAggregates, file, "missing")
		return
	}
	w, _ := json.MarshalIndent(want, "", "  ")
	if !bytes.Equal(bytes.TrimSpace(got), bytes.TrimSpace(w)) {
		rep.Addf(CheckAggregates, file, "says something else than its raw records; the values recomputed from the records are the ones used")
	}
}

// checkStatements verifies the signed statements beside the archive: each
// is signed by a trusted key and names the archive and the run's wheels;
// the summary statement carries the recomputed summary. archiveSHA is the
// archive's digest when known (lower case), "" to hash it.
func checkStatements(rep *Report, archive, archiveSHA string, run store.Run, keys []crypto.PublicKey, sum *Summary) {
	name := dist.StatementsOf(filepath.Base(archive))
	path := filepath.Join(filepath.Dir(archive), name)
	data, err := os.ReadFile(path)
	if err != nil {
		rep.Addf(CheckSignature, name, "no signed statements beside the archive")
		return
	}
	if len(keys) == 0 {
		rep.Addf(CheckSignature, name, "no trusted key to check the signatures with: pass --key PUB.pem (or list it in [signing] trusted_keys)")
		return
	}
	v, err := provenance.NewVerifier(keys...)
	if err != nil {
		rep.Addf(CheckSignature, name, "%v", err)
		return
	}
	if archiveSHA == "" {
		if archiveSHA, _, err = checksum.File(archive); err != nil {
			rep.Addf(CheckSignature, filepath.Base(archive), "%v", err)
			return
		}
	}
	want := map[string]string{filepath.Base(archive): archiveSHA}
	for _, w := range run.Wheels {
		want[w.Name] = w.SHA256
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	sawSummary := false
	for i, line := range lines {
		keyID, st, err := v.VerifyEnvelope(line)
		if err != nil {
			rep.Add(Finding{Check: CheckSignature, File: fmt.Sprintf("%s line %d", name, i+1), Member: lineOf(i + 1), Msg: err.Error()})
			continue
		}
		if rep.KeyID == "" {
			rep.KeyID = keyID
		}
		var s struct {
			Subject []struct {
				Name   string            `json:"name"`
				Digest map[string]string `json:"digest"`
			} `json:"subject"`
			PredicateType string          `json:"predicateType"`
			Predicate     json.RawMessage `json:"predicate"`
		}
		if err := json.Unmarshal(st, &s); err != nil {
			rep.Add(Finding{Check: CheckSignature, File: fmt.Sprintf("%s line %d", name, i+1), Member: lineOf(i + 1), Msg: fmt.Sprintf("not a statement: %v", err)})
			continue
		}
		got := map[string]string{}
		for _, sub := range s.Subject {
			got[sub.Name] = sub.Digest["sha256"]
		}
		for n, sha := range want {
			if got[n] != sha {
				rep.Add(Finding{Check: CheckSignature, File: n, Want: sha, Got: got[n],
					Msg: fmt.Sprintf("statement %d (%s) does not name it with sha256 %s", i+1, s.PredicateType, sha)})
			}
		}
		if s.PredicateType == SummaryPredicate && sum != nil {
			sawSummary = true
			var p summaryPredicate
			if err := json.Unmarshal(s.Predicate, &p); err != nil {
				rep.Addf(CheckSignature, name, "summary statement: %v", err)
				continue
			}
			a, _ := json.Marshal(p.Summary)
			b, _ := json.Marshal(sum)
			if !bytes.Equal(a, b) {
				rep.Addf(CheckSignature, name, "the signed summary differs from the one recomputed from the records")
			}
			if ident, err := run.CanonicalIdentity(); err == nil && !bytes.Equal(ident, p.Identity) {
				rep.Addf(CheckSignature, name, "the signed run identity differs from the store's")
			}
		}
	}
	if !sawSummary {
		rep.Addf(CheckSignature, name, "no signed summary statement")
	}
}

// checkWheels compares the wheels of the run identity with the exact
// wheels the evidence (the archive named base) must be for: each with its
// digest, and no other.
func checkWheels(rep *Report, run store.Run, want map[string]string, base string) {
	if len(want) == 0 {
		bundle := dist.NamesOf("NAME", "VERSION").Bundle("TARGET")
		if c, names := dist.Guess(base); c.Kind == dist.KindEvidence {
			bundle = names.Bundle(c.Target)
		}
		rep.Addf(CheckIdentity, bundle, "the wheels of the target's bundle are not known (it is not beside the evidence, or does not check out), so nothing shows which wheels the evidence is for: check the evidence beside its bundle")
		return
	}
	have := map[string]string{}
	for _, w := range run.Wheels {
		have[w.Name] = w.SHA256
	}
	names := make([]string, 0, len(want))
	for n := range want {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		sha := want[n]
		got, ok := have[n]
		switch {
		case !ok:
			rep.Addf(CheckIdentity, n, "the evidence is not for this wheel: its run did not install it")
		case got != sha:
			rep.Add(Finding{Check: CheckIdentity, File: n, Want: sha, Got: got,
				Msg: fmt.Sprintf("the evidence is for sha256 %s, this wheel is %s: evidence for other wheels; run mkrelease evidence run on this build", got, sha)})
		}
	}
	for _, w := range run.Wheels {
		if _, ok := want[w.Name]; !ok {
			rep.Addf(CheckIdentity, w.Name, "the run installed this wheel, which is not in the bundle")
		}
	}
}
