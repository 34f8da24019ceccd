package audit

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
)

// IsChannel reports whether dir is a release channel (it holds
// channel.json, directly or through the link to its generation).
func IsChannel(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, channel.StateFile))
	return err == nil && st.Mode().IsRegular()
}

// ChannelStates keeps what was seen of channels, so that a channel that
// goes back to an older state is refused (see channel.Checkpoint).
type ChannelStates interface {
	// Seen returns the state of the channel at dest seen before (nil
	// when none was).
	Seen(dest string) (*channel.Checkpoint, error)
	// Verified keeps cp, the state of the channel at dest, which passed
	// every check.
	Verified(dest string, cp *channel.Checkpoint) error
}

// Channel audits a release channel: the channel's own checks (package
// channel: state, every file's digest, sidecars and SHA256SUMS, core
// metadata files, index pages), its signed state (channel.json's statement
// signed by a trusted key: check "signed state"), against the state seen
// before when o.Channels has one (check "rollback"), then for every
// version: its signed
// verification summary (a trusted key, PASSED, subjects exactly the
// version's wheels, bundles, SBOM and release notes, every input
// attestation published with its digest), its signed provenance (a trusted key, and every
// published wheel, bundle and SBOM one of its subjects with the same
// digest: a release may publish some of its targets only), and each
// wheel's own checks. When every check holds, o.Channels keeps the
// channel's state.
func Channel(ctx context.Context, dest string, o Options) ([]Item, error) {
	it := newItem(dest, "channel")
	var since *channel.Checkpoint
	if o.Channels != nil {
		var err error
		if since, err = o.Channels.Seen(dest); err != nil {
			return nil, err
		}
	}
	rep, err := channel.Verify(ctx, dest, channel.VerifyOptions{TrustedKeys: o.TrustedKeys, Since: since})
	if err != nil {
		return nil, err
	}
	var fs, signed, rollback []Finding
	for _, f := range rep.Findings {
		switch f.Check {
		case channel.CheckSignedState:
			signed = append(signed, Finding{File: f.File, Msg: f.Msg})
		case channel.CheckRollback:
			rollback = append(rollback, Finding{File: f.File, Msg: f.Msg})
		default:
			fs = append(fs, Finding{File: f.File, Msg: f.Check + ": " + f.Msg})
		}
	}
	it.check("channel", fs...)
	it.check("signed state", signed...)
	if since != nil {
		it.check("rollback", rollback...)
	}
	// rep.Versions is empty when there is no readable state to go on.
	var sub []Item
	var v *provenance.Verifier
	if len(o.TrustedKeys) > 0 {
		v, err = provenance.NewVerifier(o.TrustedKeys...)
		if err != nil {
			return nil, err
		}
	}
	for _, ver := range rep.Versions {
		dir := filepath.Join(rep.Generation, channel.ReleasesDir, ver)
		rel := channel.ReleasesDir + "/" + ver + "/"
		files, err := summarisedFiles(dir)
		if err != nil {
			it.check("version "+ver, Finding{File: rel, Msg: err.Error()})
			continue
		}
		if v == nil {
			it.check("signatures "+ver, Finding{File: rel, Msg: "no trusted key to check the signatures with: pass --key PUB.pem (or list it in [signing] trusted_keys)"})
		} else {
			it.check("vsa "+ver, vsaFindings(v, dir, rel, files)...)
			it.check("provenance "+ver, channelProvenanceFindings(v, dir, rel, provenanceFiles(files))...)
		}
		names := make([]string, 0, len(files))
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			if dist.ClaimsWheel(n) {
				sub = append(sub, Wheel(filepath.Join(dir, n)))
			}
		}
	}
	items := append([]Item{it.Item}, sub...)
	if o.Channels != nil && rep.Checkpoint != nil && !slices.ContainsFunc(items, func(i Item) bool { return !i.OK }) {
		if err := o.Channels.Verified(dest, rep.Checkpoint); err != nil {
			return nil, err
		}
	}
	return items, nil
}

// provenanceFiles returns the files of a version folder (as
// [summarisedFiles] found them) that its provenance must name: all but the
// release notes, which publish writes and only the verification summary
// signs.
func provenanceFiles(files map[string]string) map[string]string {
	out := maps.Clone(files)
	maps.DeleteFunc(out, func(n, _ string) bool { c, _ := dist.Guess(n); return c.Kind == dist.KindNotes })
	return out
}

// vsaFindings checks the version folder's verification summary against
// the files it must name (see [summarisedFiles]).
func vsaFindings(v *provenance.Verifier, dir, rel string, files map[string]string) []Finding {
	vsas, _ := filepath.Glob(filepath.Join(dir, anyRelease.VSA()))
	if len(vsas) != 1 {
		return []Finding{{File: rel, Msg: fmt.Sprintf("want one signed verification summary (%s), found %d", anyRelease.VSA(), len(vsas))}}
	}
	name := rel + filepath.Base(vsas[0])
	env, err := os.ReadFile(vsas[0])
	if err != nil {
		return []Finding{{File: name, Msg: err.Error()}}
	}
	_, st, err := v.VerifyEnvelope(env)
	if err != nil {
		return []Finding{{File: name, Msg: err.Error()}}
	}
	s, err := provenance.ParseVSA(st)
	if err != nil {
		return []Finding{{File: name, Msg: err.Error()}}
	}
	var out []Finding
	if s.Result != provenance.VSAPassed {
		out = append(out, Finding{File: name, Msg: "verification result " + s.Result + ", not " + provenance.VSAPassed})
	}
	subj := map[string]string{}
	for _, x := range s.Subjects {
		subj[x.Name] = x.SHA256
		if want, ok := files[x.Name]; !ok {
			out = append(out, Finding{File: rel + x.Name, Msg: "a subject of " + filepath.Base(name) + " but not published in this version"})
		} else if want != x.SHA256 {
			out = append(out, Finding{File: rel + x.Name, Msg: fmt.Sprintf("sha256 %s, %s verified %s", want, filepath.Base(name), x.SHA256)})
		}
	}
	for n := range files {
		if _, ok := subj[n]; !ok {
			out = append(out, Finding{File: rel + n, Msg: "published but not a subject of " + filepath.Base(name)})
		}
	}
	for _, a := range s.InputAttestations {
		sha, _, err := checksum.File(filepath.Join(dir, filepath.Base(a.URI)))
		if err != nil {
			out = append(out, Finding{File: name, Msg: "input attestation " + a.URI + " is not published in this version"})
		} else if sha != a.Digest["sha256"] {
			out = append(out, Finding{File: rel + filepath.Base(a.URI), Msg: fmt.Sprintf("sha256 %s, %s read one of %s", sha, filepath.Base(name), a.Digest["sha256"])})
		}
	}
	return sortFindings(out)
}

// channelProvenanceFindings checks the version folder's provenance: signed
// by a trusted key, and every published wheel, bundle and SBOM a subject
// with the same digest.
func channelProvenanceFindings(v *provenance.Verifier, dir, rel string, files map[string]string) []Finding {
	envs := provenance.Statements(dir)
	if len(envs) != 1 {
		return []Finding{{File: rel, Msg: fmt.Sprintf("want one signed provenance (NAME-VERSION.intoto.jsonl), found %d", len(envs))}}
	}
	name := rel + filepath.Base(envs[0])
	env, err := os.ReadFile(envs[0])
	if err != nil {
		return []Finding{{File: name, Msg: err.Error()}}
	}
	res, err := v.Verify(env, provenance.WithoutArtifactsUnsafe())
	if err != nil {
		return []Finding{{File: name, Msg: err.Error()}}
	}
	subj := map[string]string{}
	for _, s := range res.Provenance.Subjects {
		subj[s.Name] = s.SHA256
	}
	var out []Finding
	for n, sha := range files {
		if got, ok := subj[n]; !ok {
			out = append(out, Finding{File: rel + n, Msg: "published but not a subject of " + filepath.Base(name)})
		} else if got != sha {
			out = append(out, Finding{File: rel + n, Msg: fmt.Sprintf("sha256 %s, %s records %s", sha, filepath.Base(name), got)})
		}
	}
	return sortFindings(out)
}

func sortFindings(fs []Finding) []Finding {
	slices.SortFunc(fs, func(a, b Finding) int { return strings.Compare(a.File+a.Msg, b.File+b.Msg) })
	return fs
}

// VSA audits a signed verification summary against the files of its
// folder (a channel's version folder): signed by a trusted key, PASSED,
// subjects exactly the folder's wheels, bundles, SBOM and release notes, every input
// attestation present with its digest.
func VSA(path string, o Options) Item {
	it := newItem(path, "vsa")
	if len(o.TrustedKeys) == 0 {
		it.check("vsa", Finding{File: filepath.Base(path), Msg: "no trusted key to check the signature with: pass --key PUB.pem (or list it in [signing] trusted_keys)"})
		return it.Item
	}
	v, err := provenance.NewVerifier(o.TrustedKeys...)
	if err != nil {
		it.check("vsa", Finding{File: filepath.Base(path), Msg: err.Error()})
		return it.Item
	}
	dir := filepath.Dir(path)
	files, err := summarisedFiles(dir)
	if err != nil {
		it.check("vsa", Finding{File: filepath.Base(path), Msg: err.Error()})
		return it.Item
	}
	it.check("vsa", vsaFindings(v, dir, "", files)...)
	return it.Item
}
