package publish

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/audit"
	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
	"github.com/mkrelease/mkrelease/notes"
)

// writeNotes writes the release notes publish publishes (package notes)
// into staging, to be selected in place of the release folder's: the
// folder's notes (the changelog's section for the version, as the build
// wrote them and every bundle carries them), then the Validation section,
// from the evidence the audit checked and recomputed (nothing is read or
// checked a second time). It returns the notes and their sidecar;
// [selectAssets] lists the notes' digest in the published SHA256SUMS. The
// notes are a pure function of the folder and its evidence, so a second
// publish of the same release has the same bytes.
func writeNotes(rel *dist.Release, folder *audit.Folder, names dist.Names, project, version string, targets []string, staging string) ([]staged, error) {
	r := notes.Release{Project: project, Version: version}
	if a, ok := rel.File(dist.NotesFile); ok {
		data, err := os.ReadFile(rel.Path(a))
		if err != nil {
			return nil, fmt.Errorf("publish: reading %s: %w", rel.Path(a), err)
		}
		r.Changelog = data
	}
	for _, t := range targets {
		name := names.Evidence(t)
		r.Targets = append(r.Targets, notes.Target{Name: t, Evidence: name, Report: folder.Evidence[name]})
	}
	data := notes.Markdown(r)
	path := filepath.Join(staging, dist.NotesFile)
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return nil, fmt.Errorf("publish: writing %s: %w", path, err)
	}
	sha := checksum.Bytes(data)
	if err := dist.WriteSidecar(path, sha); err != nil {
		return nil, fmt.Errorf("publish: writing the sidecar of %s: %w", path, err)
	}
	sidecar := dist.SidecarPath(path)
	sideSHA, sideSize, err := checksum.File(sidecar)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	return []staged{
		{path, channel.Asset{Name: dist.NotesFile, SHA256: sha, Size: int64(len(data))}},
		{sidecar, channel.Asset{Name: dist.Sidecar(dist.NotesFile), SHA256: sideSHA, Size: sideSize}},
	}, nil
}
