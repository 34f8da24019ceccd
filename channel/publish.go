package channel

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/testhook"
	"github.com/mkrelease/mkrelease/provenance"
)

// Result is the outcome of a publish.
type Result struct {
	// Dest is the channel's absolute path.
	Dest string `json:"dest"`
	// Generation is the absolute path of the generation DEST shows now,
	// and GenerationNumber its number.
	Generation       string `json:"generation"`
	GenerationNumber int    `json:"generation_number"`
	// NoOp is true when the version was already published with the same
	// bytes: nothing was written.
	NoOp bool `json:"noop"`
	// Plan is the facts the publish was decided on.
	Plan *Plan `json:"plan"`
	// URLPaths are the slash paths, relative to the channel's URL, of the
	// version's files (assets and .metadata files) and of the pages.
	URLPaths []string `json:"url_paths"`
	// Removed names what was cleaned up, relative to DEST's folder:
	// leftovers of killed publishes and generations collected.
	Removed []string `json:"removed"`
	// Checkpoint is the state the channel shows now, verified: the
	// publisher keeps it as the next publish's Release.Seen.
	Checkpoint *Checkpoint `json:"checkpoint"`
}

// Publish publishes r into the channel at dest (a folder path or a file://
// URL) so that the channel shows, in one rename, either everything it
// showed before or that plus the new version (see the package doc). It
// holds an exclusive lock on DEST's lock file throughout, waiting for
// another publish to finish (or ctx to end).
//
// Before anything else, the channel's current state must verify: its
// channel.intoto.jsonl signed by a key of r.TrustedKeys or r.Signer's, and
// matching its channel.json; and it must not be older than r.Seen. The new
// generation's number is the current one's plus one, and its channel.json
// is signed with r.Signer. An empty channel where r.Seen records a
// generation is started again after it (Plan.Restart).
//
// Errors: a *UsageError for a release that cannot be published as given;
// a *RefusedError when the channel's rules refuse it, with every reason
// (nothing is written then); otherwise an error naming the file at fault,
// after which the channel still shows its old state.
func Publish(ctx context.Context, dest string, r Release) (*Result, error) {
	p, err := newPaths(dest)
	if err != nil {
		return nil, err
	}
	if err := canPublish(p.dest); err != nil {
		return nil, err
	}
	plan, err := prepare(ctx, r)
	if err != nil {
		return nil, err
	}
	if r.Signer == nil {
		return nil, &UsageError{Msg: fmt.Sprintf("channel %s: no key to sign the channel's state with", p.dest)}
	}
	// A first look without the lock: a refusal creates nothing, not even
	// the lock file. The decision is taken again under the lock.
	if c, err := Open(p.dest); err != nil {
		return nil, err
	} else if _, _, err := c.checkTrust(r); err != nil {
		return nil, err
	} else if c.compare(plan); plan.Refusal() != nil {
		return nil, plan.Refusal()
	}
	if err := os.MkdirAll(p.parent, 0o755); err != nil {
		return nil, fmt.Errorf("channel %s: %w", p.dest, err)
	}
	unlock, err := lock(ctx, p.lock)
	if err != nil {
		return nil, err
	}
	defer unlock()
	testhook.Crash("publish/locked")

	c, err := Open(p.dest)
	if err != nil {
		return nil, err
	}
	seen, restart, err := c.checkTrust(r)
	if err != nil {
		return nil, err
	}
	c.compare(plan)
	plan.Restart = restart
	if ref := plan.Refusal(); ref != nil {
		return nil, ref
	}
	res := &Result{Dest: p.dest, Plan: plan, NoOp: plan.NoOp(), Removed: []string{}, Checkpoint: seen}
	cur := c.state.Generation
	removed, err := cleanup(p, cur)
	res.Removed = append(res.Removed, removed...)
	if err != nil {
		return nil, err
	}
	next := c.state
	if !res.NoOp {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		next = c.state.clone()
		base := cur
		if plan.Restart != nil {
			base = plan.Restart.Generation
		}
		next.Project, next.Generation = plan.Project, base+1
		next.Versions = append(next.Versions, Version{Version: plan.Version, Assets: plan.Assets, Wheels: plan.Wheels})
		slices.SortFunc(next.Versions, func(a, b Version) int {
			va, _ := pep440.Parse(a.Version)
			vb, _ := pep440.Parse(b.Version)
			return va.Compare(vb)
		})
		next.Newest = next.Versions[len(next.Versions)-1].Version
		now := r.Time
		if now.IsZero() {
			now = time.Now()
		}
		next.Published = formatPublished(now)
		data, err := stage(ctx, p, c.state, next, plan, r.Signer)
		if err != nil {
			return nil, err
		}
		res.Checkpoint = &Checkpoint{Format: CheckpointFormat, Channel: p.dest, KeyID: provenance.KeyID(r.Signer.Public())}
		res.Checkpoint.fill(&next, data)
		if err := switchTo(p, c.kind, next.Generation); err != nil {
			return nil, err
		}
	}
	// The new state is visible; what follows only collects garbage, which
	// a later publish would collect as well.
	removed, err = collect(p, next.Generation)
	res.Removed = append(res.Removed, removed...)
	if err != nil {
		return nil, err
	}
	res.Generation, res.GenerationNumber = filepath.Join(p.gens, genName(next.Generation)), next.Generation
	res.URLPaths = urlPaths(&next, plan)
	testhook.Crash("publish/done")
	return res, nil
}

// urlPaths lists the version's files and the pages of state s.
func urlPaths(s *State, plan *Plan) []string {
	v, _ := s.Lookup(plan.Version)
	var out []string
	for _, a := range v.Assets {
		out = append(out, assetPath(v.Version, a.Name))
	}
	for _, w := range v.Wheels {
		out = append(out, assetPath(v.Version, w.File+MetadataSuffix))
	}
	ps, _ := pages(s)
	for _, pg := range ps {
		out = append(out, pg.name)
	}
	return out
}

// lock takes the exclusive lock on file (flock(2); LockFileEx on
// Windows), polling so that ctx can end the wait. The returned function
// releases it; so does the process's death.
func lock(ctx context.Context, file string) (func(), error) {
	f, err := os.OpenFile(file, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", file, err)
	}
	for {
		held, err := tryLock(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", file, err)
		}
		if held {
			return func() { f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock %s (another publish holds it): %w", file, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// cleanup removes what a killed publish left: the temporary link, and in
// the generations folder everything but complete generations up to the
// current one.
func cleanup(p paths, current int) ([]string, error) {
	var removed []string
	remove := func(path string) error {
		if err := os.RemoveAll(path); err != nil {
			return fmt.Errorf("remove leftover %s: %w", path, err)
		}
		rel, _ := filepath.Rel(p.parent, path)
		removed = append(removed, rel)
		return nil
	}
	if _, err := os.Lstat(p.tmpLink); err == nil {
		if err := remove(p.tmpLink); err != nil {
			return removed, err
		}
		testhook.Crash("cleanup/removed-link")
	}
	entries, err := os.ReadDir(p.gens)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return removed, fmt.Errorf("channel %s: %w", p.gens, err)
	}
	for _, e := range entries {
		if n := parseGenName(e.Name()); n != 0 && n <= current {
			continue
		}
		if err := remove(filepath.Join(p.gens, e.Name())); err != nil {
			return removed, err
		}
		testhook.Crash("cleanup/removed")
	}
	if len(removed) > 0 {
		if err := atomicfile.SyncDir(p.parent); err != nil {
			return removed, err
		}
		if len(entries) > 0 {
			if err := atomicfile.SyncDir(p.gens); err != nil {
				return removed, err
			}
		}
		testhook.Crash("cleanup/synced")
	}
	return removed, nil
}

// stage builds generation next.Generation: in a temporary folder, then
// renamed into place. Its channel.json is signed first, so that a signer
// that fails leaves nothing behind. It returns the bytes of channel.json.
// On error the temporary folder is removed.
func stage(ctx context.Context, p paths, old, next State, plan *Plan, signer provenance.Signer) (_ []byte, err error) {
	ps, err := pages(&next)
	if err != nil {
		return nil, err
	}
	state := ps[len(ps)-1]
	if state.name != StateFile {
		return nil, fmt.Errorf("channel: internal error: the last page is %s, not %s", state.name, StateFile)
	}
	signed, err := signState(ctx, signer, state.data, &next)
	if err != nil {
		return nil, err
	}
	final := filepath.Join(p.gens, genName(next.Generation))
	tmp, err := atomicfile.TempDir(final)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	testhook.Crash("stage/created")

	oldRoot := filepath.Join(p.gens, genName(old.Generation))
	for _, v := range old.Versions {
		dir := filepath.Join(tmp, ReleasesDir, v.Version)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		files := slices.Clone(v.Assets)
		for _, w := range v.Wheels {
			files = append(files, Asset{Name: w.File + MetadataSuffix, SHA256: w.MetadataSHA256, Size: w.MetadataSize})
		}
		for _, a := range files {
			src := filepath.Join(oldRoot, ReleasesDir, v.Version, a.Name)
			if err := linkOrCopy(ctx, src, filepath.Join(dir, a.Name), a); err != nil {
				return nil, err
			}
			testhook.Crash("stage/linked")
		}
	}

	dir := filepath.Join(tmp, ReleasesDir, plan.Version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for _, a := range plan.Assets {
		if err := copyFile(ctx, plan.sources[a.Name], filepath.Join(dir, a.Name), a); err != nil {
			return nil, err
		}
		testhook.Crash("stage/copied")
	}
	for _, w := range plan.Wheels {
		if err := atomicfile.WriteFile(filepath.Join(dir, w.File+MetadataSuffix), plan.meta[w.File], 0o644); err != nil {
			return nil, err
		}
		testhook.Crash("stage/metadata")
	}

	for _, pg := range ps {
		file := filepath.Join(tmp, filepath.FromSlash(pg.name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			return nil, err
		}
		if err := atomicfile.WriteFile(file, pg.data, 0o644); err != nil {
			return nil, err
		}
		switch {
		case pg.name == SimpleDir+"/index.html":
			testhook.Crash("stage/simple-root")
		case strings.HasPrefix(pg.name, SimpleDir+"/"):
			testhook.Crash("stage/simple-project")
		case pg.name == FindLinksFile:
			testhook.Crash("stage/find-links")
		case pg.name == IndexFile:
			testhook.Crash("stage/index")
		case pg.name == StateFile:
			testhook.Crash("stage/state")
		}
	}
	if err := atomicfile.WriteFile(filepath.Join(tmp, SignedStateFile), signed, 0o644); err != nil {
		return nil, err
	}
	testhook.Crash("stage/signed")
	if err := syncTree(tmp); err != nil {
		return nil, err
	}
	testhook.Crash("stage/synced")
	if err := os.Rename(tmp, final); err != nil {
		return nil, fmt.Errorf("channel: rename %s to %s: %w", tmp, final, err)
	}
	testhook.Crash("stage/renamed")
	if err := atomicfile.SyncDir(p.gens); err != nil {
		return nil, err
	}
	testhook.Crash("stage/synced-generations")
	return state.data, nil
}

// syncTree fsyncs every folder under root, deepest first, so that every
// name in it (hard links included) is on disk. Files written here were
// synced when committed; hard-linked ones were synced by the publish that
// wrote them.
func syncTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, path)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	for _, d := range slices.Backward(dirs) {
		if err := atomicfile.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// linkOrCopy hard-links src, a file of the current generation, to dst;
// where the file system cannot, it copies it, checking it against a.
func linkOrCopy(ctx context.Context, src, dst string, a Asset) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	return copyFile(ctx, src, dst, a)
}

// copyFile copies src to dst (mode 0644, synced), checking that the bytes
// copied have a's digest and size: an asset that changed since it was
// planned, or a damaged published file, is an error naming it. It counts
// as testhook point "copy" on src.
func copyFile(ctx context.Context, src, dst string, a Asset) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	defer in.Close()
	testhook.Count(testhook.CountCopy, src)
	out, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return err
	}
	defer out.Abort()
	h := sha256.New()
	buf := make([]byte, 1<<20)
	var size int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := in.Read(buf)
		if n > 0 {
			if _, err := out.Write(buf[:n]); err != nil {
				return fmt.Errorf("channel: write %s: %w", dst, err)
			}
			h.Write(buf[:n])
			if size == 0 {
				testhook.Crash("stage/copy-partial")
			}
			size += int64(n)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("channel: read %s: %w", src, rerr)
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != a.SHA256 || size != a.Size {
		return fmt.Errorf("channel: %s changed while being published: sha256 %s, %d bytes; expected %s, %d bytes", src, got, size, a.SHA256, a.Size)
	}
	return out.Commit()
}

// switchTo makes DEST show generation n: a new link under a temporary
// name, renamed over DEST (an empty folder DEST is removed first: it showed
// an empty channel, as a missing DEST does).
func switchTo(p paths, kind destKind, n int) error {
	if err := os.Symlink(p.linkTarget(n), p.tmpLink); err != nil {
		return fmt.Errorf("channel: %w", err)
	}
	testhook.Crash("switch/link-created")
	if kind == destEmptyDir {
		if err := os.Remove(p.dest); err != nil {
			os.Remove(p.tmpLink)
			return fmt.Errorf("channel %s: replace the empty folder: %w", p.dest, err)
		}
		testhook.Crash("switch/removed-empty-dest")
	}
	testhook.Crash("switch/before-rename")
	if err := os.Rename(p.tmpLink, p.dest); err != nil {
		os.Remove(p.tmpLink)
		return fmt.Errorf("channel: switch %s: %w", p.dest, err)
	}
	testhook.Crash("switch/renamed")
	if err := atomicfile.SyncDir(p.parent); err != nil {
		return err
	}
	testhook.Crash("switch/synced")
	return nil
}

// collect removes the generations older than the one before current: each
// is first renamed aside (".trash-g-NNNNNN"), so that a kill while removing
// leaves nothing that looks like a generation.
func collect(p paths, current int) ([]string, error) {
	entries, err := os.ReadDir(p.gens)
	if err != nil {
		return nil, fmt.Errorf("channel %s: %w", p.gens, err)
	}
	var older []int
	for _, e := range entries {
		if n := parseGenName(e.Name()); n != 0 && n < current {
			older = append(older, n)
		}
	}
	slices.Sort(older)
	var removed []string
	for i, n := range older {
		if i == len(older)-1 {
			break // the previous generation is kept
		}
		aside := filepath.Join(p.gens, ".trash-"+genName(n))
		if err := os.Rename(filepath.Join(p.gens, genName(n)), aside); err != nil {
			return removed, fmt.Errorf("channel: collect %s: %w", genName(n), err)
		}
		testhook.Crash("gc/moved-aside")
		if err := os.RemoveAll(aside); err != nil {
			return removed, fmt.Errorf("channel: collect %s: %w", aside, err)
		}
		testhook.Crash("gc/removed")
		removed = append(removed, filepath.Join(filepath.Base(p.gens), genName(n)))
	}
	if err := atomicfile.SyncDir(p.gens); err != nil {
		return removed, err
	}
	testhook.Crash("gc/synced")
	return removed, nil
}
