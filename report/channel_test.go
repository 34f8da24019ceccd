package report

import (
	"context"
	"crypto"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/evidencetest"
	"github.com/mkrelease/mkrelease/internal/testkey"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
)

// makeChannel publishes version 1.0 of demo (a pure-Python wheel and a
// verification summary signed by a development key) into a new channel
// and returns the channel and the key.
func makeChannel(t *testing.T) (string, crypto.PublicKey) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	fn, err := wheel.NewFilename("demo", "1.0", "py3", "none", "any")
	if err != nil {
		t.Fatal(err)
	}
	md := &wheel.Metadata{}
	md.Add("Metadata-Version", "2.1")
	md.Add("Name", "demo")
	md.Add("Version", "1.0")
	meta, err := md.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	res, err := wheel.Write(ctx, &wheel.Contents{Name: fn,
		Members: []wheel.Member{{Path: "demo/__init__.py", Data: []byte("\n"), Mode: 0o644}},
		DistInfo: []wheel.Member{{Path: "METADATA", Data: meta, Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644}},
		Epoch: 1793491200}, dir)
	if err != nil {
		t.Fatal(err)
	}
	sha, _, err := checksum.File(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	signer, _, err := provenance.DevKey(filepath.Join(dir, "keys"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := provenance.VSA{Subjects: []provenance.Subject{{Name: filepath.Base(res.Path), SHA256: sha}},
		VerifierID: "https://example.org/verifier", ResourceURI: "demo==1.0", PolicyURI: "https://example.org/policies",
		PolicyDigest: map[string]string{"sha256": hex('9')}, Result: provenance.VSAPassed, TimeVerified: time.Unix(1793491200, 0).UTC(),
	}.Statement()
	if err != nil {
		t.Fatal(err)
	}
	env, err := provenance.SignStatement(ctx, signer, st)
	if err != nil {
		t.Fatal(err)
	}
	vsa := filepath.Join(dir, "demo-1.0.vsa.intoto.jsonl")
	if err := os.WriteFile(vsa, env, 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "ch")
	if _, err := channel.Publish(ctx, dest, channel.Release{Project: "demo", Version: "1.0", Assets: []string{res.Path, vsa}, Signer: signer}); err != nil {
		t.Fatal(err)
	}
	return dest, signer.Public()
}

func TestFromChannel(t *testing.T) {
	dest, key := makeChannel(t)
	other, _, err := provenance.DevKey(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		keys     []crypto.PublicKey
		verified bool
		finding  string
	}{
		{"trusted key", []crypto.PublicKey{key}, true, ""},
		{"no key", nil, false, "signature not checked"},
		{"another key", []crypto.PublicKey{other.Public()}, false, "signature"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := FromChannel(context.Background(), dest, ChannelOptions{TrustedKeys: tc.keys})
			if err != nil {
				t.Fatal(err)
			}
			if r.Kind != KindChannel || r.Project != "demo" || r.Channel.Generation != 1 || r.Channel.Newest != "1.0" || len(r.Channel.Versions) != 1 {
				t.Fatalf("report %+v channel %+v", r, r.Channel)
			}
			v := r.Channel.Versions[0]
			var names []string
			for _, a := range v.Assets {
				names = append(names, a.Name)
				if len(a.SHA256) != 64 || a.Size == 0 {
					t.Errorf("asset %+v", a)
				}
			}
			if !slices.Contains(names, "demo-1.0-py3-none-any.whl") || !slices.Contains(names, "demo-1.0.vsa.intoto.jsonl") || !slices.IsSorted(names) {
				t.Errorf("assets %q", names)
			}
			vs := v.VSA
			if vs == nil || vs.Result != provenance.VSAPassed || vs.PolicyURI != "https://example.org/policies" || vs.PolicySHA256 != hex('9') || vs.Subjects != 1 {
				t.Fatalf("VSA %+v", vs)
			}
			if vs.SignatureVerified != tc.verified || !strings.Contains(vs.Finding, tc.finding) {
				t.Errorf("signature verified %v finding %q, want %v and %q", vs.SignatureVerified, vs.Finding, tc.verified, tc.finding)
			}
		})
	}
	if _, err := FromChannel(context.Background(), filepath.Join(dest, "releases"), ChannelOptions{}); err == nil {
		t.Error("a folder that is not a channel reports")
	}
}

// TestChannelPage: a channel's page lists each version with its assets
// and its summary's verdict, and loads nothing.
func TestChannelPage(t *testing.T) {
	dest, key := makeChannel(t)
	r, err := FromChannel(context.Background(), dest, ChannelOptions{TrustedKeys: []crypto.PublicKey{key}})
	if err != nil {
		t.Fatal(err)
	}
	page := string(renderHTML(t, r))
	for _, want := range []string{`<h3 class="version" data-version="1.0">1.0</h3>`, `<span class="ok">PASSED</span>`,
		`<span class="ok">signature verified</span>`, `<td><code>demo-1.0-py3-none-any.whl</code></td>`, "<p>No evidence.</p>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	for _, bad := range []string{"<script", "src=", "href=", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page has %s", bad)
		}
	}
	var text strings.Builder
	if err := WriteText(&text, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "verification summary demo-1.0.vsa.intoto.jsonl: PASSED, policy https://example.org/policies sha256:"+hex('9')+", 1 subjects, signature verified\n") {
		t.Errorf("summary:\n%s", text.String())
	}
}

// TestChannelEvidenceNeedsTheBundle: evidence published without its
// target's bundle is checked against no wheels, never against the wheels
// published beside it: the identity check fails, naming the bundle, even
// when those wheels are the ones the run installed.
func TestChannelEvidenceNeedsTheBundle(t *testing.T) {
	dir := t.TempDir()
	fn, err := wheel.NewFilename("demo", "1.0", "py3", "none", "any")
	if err != nil {
		t.Fatal(err)
	}
	res, err := wheel.Write(context.Background(), &wheel.Contents{Name: fn,
		DistInfo: []wheel.Member{{Path: "METADATA", Data: []byte("Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n"), Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644}},
		Epoch: 1793491200}, dir)
	if err != nil {
		t.Fatal(err)
	}
	sha, _, err := checksum.File(res.Path)
	if err != nil {
		t.Fatal(err)
	}
	ev := evidencetest.Write(t, dir, "demo", "1.0", "t1", []store.FileDigest{{Name: filepath.Base(res.Path), SHA256: sha}})
	dest := filepath.Join(t.TempDir(), "ch")
	if _, err := channel.Publish(context.Background(), dest, channel.Release{Project: "demo", Version: "1.0", Assets: []string{res.Path, ev}, Signer: testkey.Signer("report")}); err != nil {
		t.Fatal(err)
	}
	r, err := FromChannel(context.Background(), dest, ChannelOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const want = "identity: demo-1.0-t1.tar.gz: the wheels of the target's bundle are not known (it is not beside the evidence, or does not check out), so nothing shows which wheels the evidence is for: check the evidence beside its bundle"
	if len(r.Evidence) != 1 || r.Evidence[0].OK || !slices.Contains(r.Evidence[0].Findings, want) {
		t.Fatalf("evidence %+v\nwant it refused with %q", r.Evidence, want)
	}
	var identity []string
	for _, f := range r.Evidence[0].Findings {
		if strings.HasPrefix(f, "identity: ") {
			identity = append(identity, f)
		}
	}
	if len(identity) != 1 {
		t.Errorf("identity findings %q, want only %q", identity, want)
	}
}
