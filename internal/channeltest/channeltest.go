// Package channeltest publishes small releases into a channel for tests of
// what reads channels (audit, the CLI's verify and publish): each release
// passes every check `mkrelease verify CHANNEL` makes, without a build or
// verifier evidence. The channel is published by channel.Publish itself,
// so its generations, signed state and pages are the real ones.
package channeltest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/provenance"
	"github.com/mkrelease/mkrelease/wheel"
)

// Publish writes the assets of release o.Project o.Version into a
// temporary folder (removed before it returns): a pure-Python wheel, a
// provenance naming it and a verification summary (PASSED) naming it, both
// signed by o.Signer; then publishes them, as o.Assets, into the channel at
// dest with channel.Publish and the rest of o (o.Signer signs the
// channel's state too).
func Publish(ctx context.Context, dest string, o channel.Release) (*channel.Result, error) {
	dir, err := os.MkdirTemp("", "channeltest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if o.Signer == nil {
		return nil, fmt.Errorf("channeltest: %s %s: no signer", o.Project, o.Version)
	}
	if o.Assets, err = write(ctx, dir, o.Project, o.Version, o.Signer); err != nil {
		return nil, fmt.Errorf("channeltest: %s %s: %w", o.Project, o.Version, err)
	}
	return channel.Publish(ctx, dest, o)
}

// write writes the assets of project version into dir and returns their
// paths.
func write(ctx context.Context, dir, project, version string, signer provenance.Signer) ([]string, error) {
	fn, err := wheel.NewFilename(project, version, "py3", "none", "any")
	if err != nil {
		return nil, err
	}
	md := &wheel.Metadata{}
	md.Add("Metadata-Version", "2.1")
	md.Add("Name", project)
	md.Add("Version", version)
	md.Add("Summary", "a channel test release")
	meta, err := md.Bytes()
	if err != nil {
		return nil, err
	}
	w, err := wheel.Write(ctx, &wheel.Contents{
		Name:    fn,
		Members: []wheel.Member{{Path: fn.Distribution + "/__init__.py", Data: fmt.Appendf(nil, "VERSION = %q\n", version), Mode: 0o644}},
		DistInfo: []wheel.Member{
			{Path: "METADATA", Data: meta, Mode: 0o644},
			{Path: "WHEEL", Data: []byte("Wheel-Version: 1.0\nGenerator: mkrelease-channeltest\nRoot-Is-Purelib: true\nTag: py3-none-any\n"), Mode: 0o644},
		},
		Epoch: 1793491200,
	}, dir)
	if err != nil {
		return nil, err
	}
	sha, _, err := checksum.File(w.Path)
	if err != nil {
		return nil, err
	}
	subjects := []provenance.Subject{{Name: filepath.Base(w.Path), SHA256: sha}}
	names := dist.NamesOf(project, version)

	prov, err := provenance.Provenance{
		Subjects:           subjects,
		InternalParameters: map[string]any{"source_date_epoch": 1793491200},
		BuilderID:          "https://example.invalid/channeltest",
	}.Statement()
	if err != nil {
		return nil, err
	}
	provEnv, _, err := provenance.Sign(ctx, signer, prov)
	if err != nil {
		return nil, err
	}
	vsa, err := provenance.VSA{
		Subjects: subjects, VerifierID: "https://example.invalid/channeltest", ResourceURI: "pkg:generic/" + project + "@" + version,
		PolicyURI: "https://example.invalid/policies", PolicyDigest: map[string]string{"sha256": checksum.Bytes(nil)},
		Result: provenance.VSAPassed, TimeVerified: time.Unix(1793491200, 0),
	}.Statement()
	if err != nil {
		return nil, err
	}
	vsaEnv, err := provenance.SignStatement(ctx, signer, vsa)
	if err != nil {
		return nil, err
	}
	assets := []string{w.Path}
	for name, data := range map[string][]byte{names.Provenance(): provEnv, names.VSA(): vsaEnv} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return nil, err
		}
		assets = append(assets, p)
	}
	return assets, nil
}
