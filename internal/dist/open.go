package dist

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

// Release is a release folder loaded back: its manifest, its artifact
// list and every file it holds, each hashed once. Checkers compare what
// the records say ([Release.Listed]) with what the folder holds
// ([Release.Files]); nothing here judges.
type Release struct {
	// Dir is the folder.
	Dir string
	// Names spells the release's file names.
	Names Names
	// Manifest is manifest.json.
	Manifest *Manifest
	// List is artifacts.json.
	List *ArtifactList
	// Irregular are the paths of entries that are neither regular files
	// nor the build/ folder's sub-folders (links, devices, other folders):
	// a release holds none.
	Irregular []string

	files []Artifact
	byKey map[string]int
}

// Open loads the release folder dir. It reads manifest.json and
// artifacts.json, lists the folder (the top level and build/), classifies
// every file and hashes each once, on every core. A file the list records
// keeps the list's kind, target and names, with the digest and size found
// on disk. The error is for a folder that cannot be read or has no
// readable manifest and list; what the files hold is for checkers to judge.
func Open(ctx context.Context, dir string) (*Release, error) {
	m, err := ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	l, err := ReadArtifactList(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: %w\n\thint: a release folder carries %s since mkrelease 0.1; rebuild it with mkrelease build", dir, err, ArtifactsFile)
	}
	if l.Project != m.Project.Name || l.Version != m.Project.Version {
		return nil, fmt.Errorf("%s: %s is for %s %s, %s for %s %s", dir, ArtifactsFile, l.Project, l.Version, ManifestFile, m.Project.Name, m.Project.Version)
	}
	r := &Release{Dir: dir, Names: l.Names(), Manifest: m, List: l, byKey: map[string]int{}}
	if err := r.scan(); err != nil {
		return nil, err
	}
	if err := r.hash(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// scan lists and classifies the folder.
func (r *Release) scan() error {
	listed := map[string]Artifact{}
	for _, a := range r.List.Artifacts {
		listed[a.Path] = a
	}
	add := func(rel string) {
		a, ok := listed[rel]
		if !ok {
			if target, _, isBin := strings.Cut(strings.TrimPrefix(rel, BinDir+"/"), "/"); strings.HasPrefix(rel, BinDir+"/") && isBin {
				a = Artifact{Kind: KindBinary, Path: rel, Target: target}
			} else {
				c := r.Names.Classify(rel)
				a = Artifact{Kind: c.Kind, Path: rel, Target: c.Target}
			}
		}
		a.SHA256, a.Size = "", 0
		r.byKey[rel] = len(r.files)
		r.files = append(r.files, a)
	}
	entries, err := os.ReadDir(r.Dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		switch {
		case e.Type().IsRegular():
			add(e.Name())
		case e.IsDir() && e.Name() == BinDir:
			err := filepath.WalkDir(filepath.Join(r.Dir, BinDir), func(p string, d fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(r.Dir, p)
				rel = filepath.ToSlash(rel)
				switch {
				case d.Type().IsRegular():
					add(rel)
				case !d.IsDir():
					r.Irregular = append(r.Irregular, rel)
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("list %s: %w", r.Dir, err)
			}
		default:
			r.Irregular = append(r.Irregular, e.Name())
		}
	}
	slices.SortFunc(r.files, func(a, b Artifact) int { return strings.Compare(a.Path, b.Path) })
	for i, a := range r.files {
		r.byKey[a.Path] = i
	}
	slices.Sort(r.Irregular)
	return nil
}

// hash hashes every file once, on every core.
func (r *Release) hash(ctx context.Context) error {
	jobs := make(chan int)
	errs := make([]error, len(r.files))
	var wg sync.WaitGroup
	for range max(1, min(runtime.GOMAXPROCS(0), len(r.files))) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := ctx.Err(); err != nil {
					errs[i] = err
					continue
				}
				sha, size, err := checksum.File(r.Path(r.files[i]))
				if err != nil {
					errs[i] = fmt.Errorf("hash %s: %w", r.Path(r.files[i]), err)
					continue
				}
				r.files[i].SHA256, r.files[i].Size = sha, size
			}
		}()
	}
	for i := range r.files {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Path is the path of a on disk.
func (r *Release) Path(a Artifact) string {
	return filepath.Join(r.Dir, filepath.FromSlash(path.Clean(a.Path)))
}

// Files returns the files found that f selects (all when f is nil), with
// the digests found on disk, sorted by path.
func (r *Release) Files(f Filter) []Artifact {
	var out []Artifact
	for _, a := range r.files {
		if f == nil || f(a) {
			out = append(out, a)
		}
	}
	return out
}

// File returns the file at rel (slash-separated, relative to the folder).
func (r *Release) File(rel string) (Artifact, bool) {
	i, ok := r.byKey[rel]
	if !ok {
		return Artifact{}, false
	}
	return r.files[i], true
}

// Listed returns the artifacts the artifact list records that f selects,
// with the digests it records.
func (r *Release) Listed(f Filter) []Artifact {
	var out []Artifact
	for _, a := range r.List.Artifacts {
		if f == nil || f(a) {
			out = append(out, a)
		}
	}
	return out
}

// Targets are the targets manifest.json records, in its order.
func (r *Release) Targets() []string {
	var out []string
	for _, t := range r.Manifest.Targets {
		out = append(out, t.Name)
	}
	return out
}
