// Package evidencetest writes verifier evidence archives for tests of the
// packages that check them (audit, report, publish): the smallest archive
// evidence/runner.Check reads as far as its identity check, so that a test
// can show which wheels a caller compares the run with, without running a
// lane.
package evidencetest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/evidence/runner"
	"github.com/mkrelease/mkrelease/evidence/store"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/internal/tarball"
)

// Write writes into dir the evidence archive of project version for
// target (NAME-VERSION-verifier-evidence-TARGET.tar.gz) and returns its
// path. Its run ran no lane and installed wheels; its manifest carries the
// store's run identity. It has no sidecar, no SHA256SUMS, no summary and
// no signed statements: those checks fail, the identity check runs.
func Write(t testing.TB, dir, project, version, target string, wheels []store.FileDigest) string {
	t.Helper()
	stage := t.TempDir()
	db := filepath.Join(stage, runner.StoreFile)
	run := store.Run{ID: "run-1", Target: target, Wheels: wheels, SourcesTreeHash: strings.Repeat("d", 64), Interpreter: "CPython 3.12.0"}
	if err := store.Write(db, run, nil, nil); err != nil {
		t.Fatal(err)
	}
	ident, err := run.CanonicalIdentity()
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := json.Marshal(runner.Manifest{Schema: runner.ManifestSchema, Project: project, Version: version, Target: target, RunID: run.ID, Identity: ident})
	if err != nil {
		t.Fatal(err)
	}
	names := dist.NamesOf(project, version)
	path := filepath.Join(dir, names.Evidence(target))
	if _, _, err := tarball.WriteFile(context.Background(), path, []tarball.Entry{
		{Path: dist.ManifestFile, Data: manifest, Mode: 0o644},
		{Path: runner.StoreFile, File: db, Mode: 0o644},
	}, tarball.Options{Root: names.EvidenceRoot(target), MTime: 1793491200}); err != nil {
		t.Fatal(err)
	}
	return path
}
