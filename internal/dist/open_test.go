package dist

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeRelease(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{}
	for k, v := range sample {
		if k != ManifestFile {
			files[k] = v
		}
	}
	m, _ := json.Marshal(Manifest{Schema: ManifestSchema, Project: ManifestProject{Name: "vexl", Version: "0.3.0"},
		Targets: []ManifestTarget{{Name: "linux-x86_64"}, {Name: "linux-aarch64"}}})
	files[ManifestFile] = string(m) + "\n"
	as := writeFiles(t, dir, files)
	if _, err := WriteArtifactList(dir, NewArtifactList("vexl", "0.3.0", as)); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestOpen(t *testing.T) {
	dir := writeRelease(t)
	n := NamesOf("vexl", "0.3.0")
	// What comes after the build: evidence, provenance, a stray file.
	for _, name := range []string{n.Evidence("linux-x86_64"), n.EvidenceStatements("linux-x86_64"), n.Provenance(), "stray.txt"} {
		os.WriteFile(filepath.Join(dir, name), []byte(name), 0o644)
	}
	os.Symlink("manifest.json", filepath.Join(dir, "link.json"))
	os.Mkdir(filepath.Join(dir, "other"), 0o755)

	r, err := Open(t.Context(), dir)
	if err != nil || r.Check() != nil {
		t.Fatal(err, r.Check())
	}
	if r.Names != n || strings.Join(r.Targets(), ",") != "linux-x86_64,linux-aarch64" {
		t.Errorf("names %+v targets %v", r.Names, r.Targets())
	}
	if strings.Join(r.Irregular, ",") != "link.json,other" {
		t.Errorf("irregular %v", r.Irregular)
	}
	for _, a := range r.Listed(nil) {
		got, ok := r.File(a.Path)
		if !ok || got != a {
			t.Errorf("listed %+v, found %+v", a, got)
		}
	}
	kinds := map[Kind]int{}
	for _, a := range r.Files(nil) {
		kinds[a.Kind]++
		if a.SHA256 == "" {
			t.Errorf("%s not hashed", a.Path)
		}
	}
	want := map[Kind]int{KindWheel: 1, KindBundle: 1, KindSBOM: 1, KindManifest: 1, KindNotes: 1, KindBinary: 1,
		KindArtifacts: 1, KindChecksums: 1, KindSidecar: 6, KindEvidence: 1, KindEvidenceStatements: 1, KindProvenance: 1, KindOther: 1}
	for k, c := range want {
		if kinds[k] != c {
			t.Errorf("%d files of kind %v, want %d (all: %v)", kinds[k], k, c, kinds)
		}
	}
	if w := r.Files(And(ByKind(KindWheel), ByTarget("linux-x86_64"))); len(w) != 1 {
		t.Errorf("the wheel keeps the list's target: %+v", w)
	}
	if s := r.Files(Subjects()); len(s) != 3 {
		t.Errorf("subjects %+v", s)
	}

	// A changed file shows as a digest the list does not record.
	os.WriteFile(filepath.Join(dir, n.SBOM()), []byte("changed"), 0o644)
	r, err = Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := r.File(n.SBOM())
	listed := r.Listed(func(a Artifact) bool { return a.Path == n.SBOM() })
	if len(listed) != 1 || got.SHA256 == listed[0].SHA256 || got.Size != 7 {
		t.Errorf("tampered SBOM: found %+v listed %+v", got, listed)
	}
}

func TestOpenLoadsWhatIsThereAndCheckSaysWhatIsMissing(t *testing.T) {
	dir := writeRelease(t)
	os.Remove(filepath.Join(dir, ArtifactsFile))
	r, err := Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), "rebuild") {
		t.Errorf("no list: %v", err)
	}
	if r.Names != NamesOf("vexl", "0.3.0") {
		t.Errorf("names from the manifest: %+v", r.Names)
	}
	if b := r.Files(ByKind(KindBundle)); len(b) != 1 || b[0].Target != "linux-x86_64" {
		t.Errorf("bundle classified by the manifest's names: %+v", b)
	}

	// Neither record: names are read from the files' shapes.
	os.Remove(filepath.Join(dir, ManifestFile))
	r, err = Open(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Check(); err == nil || !strings.Contains(err.Error(), ManifestFile) {
		t.Errorf("no manifest: %v", err)
	}
	if s := r.Files(ByKind(KindSBOM)); len(s) != 1 || r.Targets() != nil || r.Listed(nil) != nil {
		t.Errorf("without records: sbom %+v targets %v", s, r.Targets())
	}

	dir = writeRelease(t)
	l, _ := ReadArtifactList(dir)
	l.Version = "0.4.0"
	WriteArtifactList(dir, l)
	if r, err := Open(t.Context(), dir); err != nil || r.Check() == nil || !strings.Contains(r.Check().Error(), "0.4.0") {
		t.Errorf("list of another version: %v", err)
	}

	if _, err := Open(t.Context(), filepath.Join(dir, "absent")); err == nil {
		t.Error("a folder that does not exist opened")
	}
	dir = writeRelease(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Open(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
