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
// ([Release.Files]); nothing here judges, so a damaged folder loads too:
// a manifest or list that cannot be read is nil, with the reason beside.
type Release struct {
	// Dir is the folder.
	Dir string
	// Names spells the release's file names: those of the artifact list's
	// release, else of the manifest's; empty when neither is readable
	// (names are then classified by their shape, [Guess]).
	Names Names
	// Manifest is manifest.json, nil when unreadable (ManifestErr says
	// why).
	Manifest    *Manifest
	ManifestErr error
	// List is artifacts.json, nil when unreadable (ListErr says why).
	List    *ArtifactList
	ListErr error
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
// on disk. The error is for a folder that cannot be listed or a file that
// cannot be hashed (or ctx ending); what the files hold, and whether the
// records are there, is for checkers to judge ([Release.Check]).
func Open(ctx context.Context, dir string) (*Release, error) {
	r := &Release{Dir: dir, byKey: map[string]int{}}
	r.Manifest, r.ManifestErr = ReadManifest(dir)
	r.List, r.ListErr = ReadArtifactList(dir)
	switch {
	case r.List != nil:
		r.Names = r.List.Names()
	case r.Manifest != nil:
		r.Names = NamesOf(r.Manifest.Project.Name, r.Manifest.Project.Version)
	}
	if err := r.scan(); err != nil {
		return nil, err
	}
	if err := r.hash(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// Check returns why the folder is not a whole release: a manifest or an
// artifact list that cannot be read, or the two naming different
// releases. The remedy is to rebuild it.
func (r *Release) Check() error {
	switch {
	case r.ManifestErr != nil:
		return r.ManifestErr
	case r.ListErr != nil:
		return fmt.Errorf("%s: %w\n\thint: a release folder carries %s; rebuild it with mkrelease build", r.Dir, r.ListErr, ArtifactsFile)
	case r.List.Project != r.Manifest.Project.Name || r.List.Version != r.Manifest.Project.Version:
		return fmt.Errorf("%s: %s is for %s %s, %s for %s %s", r.Dir, ArtifactsFile, r.List.Project, r.List.Version, ManifestFile, r.Manifest.Project.Name, r.Manifest.Project.Version)
	}
	return nil
}

// Classify says what a base name of the folder is: by the release's names
// when they are known, else by its shape.
func (r *Release) Classify(name string) Class {
	if r.Names.Base == "" {
		c, _ := Guess(name)
		return c
	}
	return r.Names.Classify(name)
}

// scan lists and classifies the folder.
func (r *Release) scan() error {
	listed := map[string]Artifact{}
	for _, a := range r.Listed(nil) {
		listed[a.Path] = a
	}
	add := func(rel string) {
		a, ok := listed[rel]
		if !ok {
			if target, _, isBin := strings.Cut(strings.TrimPrefix(rel, BinDir+"/"), "/"); strings.HasPrefix(rel, BinDir+"/") && isBin {
				a = Artifact{Kind: KindBinary, Path: rel, Target: target}
			} else {
				c := r.Classify(rel)
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
// with the digests it records (none when the list is unreadable).
func (r *Release) Listed(f Filter) []Artifact {
	if r.List == nil {
		return nil
	}
	var out []Artifact
	for _, a := range r.List.Artifacts {
		if f == nil || f(a) {
			out = append(out, a)
		}
	}
	return out
}

// Targets are the targets manifest.json records, in its order (none when
// it is unreadable).
func (r *Release) Targets() []string {
	if r.Manifest == nil {
		return nil
	}
	var out []string
	for _, t := range r.Manifest.Targets {
		out = append(out, t.Name)
	}
	return out
}
