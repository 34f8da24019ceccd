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
// into staging and puts them among the selected assets in place of the
// release folder's: the folder's notes (the changelog's section for the
// version, as the build wrote them and every bundle carries them), then
// the Validation section, from the evidence the audit checked and
// recomputed (nothing is read or checked a second time). Their sidecar is
// written beside them, and the published SHA256SUMS lists them with
// their digest. The notes are a pure function of the folder and its
// evidence, so a second publish of the same release has the same bytes.
func writeNotes(rel *dist.Release, folder *audit.Folder, sel *selection, project, version string, targets []string, staging string) error {
	r := notes.Release{Project: project, Version: version}
	if a, ok := rel.File(dist.NotesFile); ok {
		data, err := os.ReadFile(rel.Path(a))
		if err != nil {
			return fmt.Errorf("publish: reading %s: %w", rel.Path(a), err)
		}
		r.Changelog = data
	}
	for _, t := range targets {
		name := sel.release.Evidence(t)
		r.Targets = append(r.Targets, notes.Target{Name: t, Evidence: name, Report: folder.Evidence[name]})
	}
	data := notes.Markdown(r)
	path := filepath.Join(staging, dist.NotesFile)
	if err := atomicfile.WriteFile(path, data, 0o644); err != nil {
		return fmt.Errorf("publish: writing %s: %w", path, err)
	}
	sha := checksum.Bytes(data)
	if err := dist.WriteSidecar(path, sha); err != nil {
		return fmt.Errorf("publish: writing the sidecar of %s: %w", path, err)
	}
	sidecar := dist.SidecarPath(path)
	sideSHA, sideSize, err := checksum.File(sidecar)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	sel.put(path, channel.Asset{Name: dist.NotesFile, SHA256: sha, Size: int64(len(data))})
	sel.put(sidecar, channel.Asset{Name: dist.Sidecar(dist.NotesFile), SHA256: sideSHA, Size: sideSize})
	return sel.relistSums(staging, dist.NotesFile, sha)
}
