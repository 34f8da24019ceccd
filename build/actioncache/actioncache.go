// Package actioncache stores the outputs of build actions under the sha256
// of all their inputs (the action key), so that an unchanged action is
// never run twice.
//
// An entry is a folder actions/KK/KEY/ holding entry.json (the key, the step
// and target, and each output's path, size, mode and sha256), log.txt (the
// action's output) and out/ (the files). Entries are assembled under a
// temporary name and renamed into place, so a reader, or a kill at any
// moment, never sees a partial entry.
//
// Restore serves an entry only when all of these hold; anything else is a
// [*CorruptError], the entry is discarded and the caller runs the action
// again:
//   - the entry's folder holds entry.json (a folder without it is what a
//     removal cut short left: it is no entry, and would block storing the
//     action again);
//   - entry.json parses and names the key, step and target asked for;
//   - its outputs are exactly the step's declared outputs: none missing,
//     none extra, none listed twice, each path canonical (slash-separated,
//     relative, clean: no "." or ".." element, no empty element) and
//     inside the output folder;
//   - each output's mode is 0644 or 0755, its sha256 is 64 lowercase hex
//     digits, and the stored file is a regular file of that mode;
//   - out/ holds nothing but the listed files and their parent folders;
//   - every file has the recorded size and sha256: it is re-hashed as it
//     is copied out, unless [Cache.Digests] remembers its digest for its
//     identity on disk (device, inode, size and modification time), in
//     which case the identity is checked again after the copy.
//
// A discarded entry is first renamed aside (to a ".tmp-" name that
// [Cache.Trim] collects), so that what is left of it, however damaged,
// never blocks the next store; Put and Import likewise discard a half
// entry they find in their way.
//
// The files of an entry are its own: Put copies each output into the
// entry and Restore copies each stored file out (a reflink where the file
// system makes one, FICLONE on Linux, which shares the blocks until either
// side is written; a plain copy otherwise), never a hard link. So an
// output folder (dist/) and the cache never share a file: a person who
// edits a restored output in place changes that copy only, and the next
// build restores the recorded bytes again; a file in the output folder is
// never linked back into the cache.
//
// Failing to read the entry is the entry's fault (a [*CorruptError]).
// Failing to write the destination (a full disk, an exhausted quota, a
// read-only or failing device) is the build's fault: Restore returns a
// [*WriteError] naming the destination and the remedy, and keeps the entry.
// In every failing case nothing Restore wrote is left in the destination.
//
// An entry's last use is its entry.json's modification time, which Put
// sets and Restore moves forward (at most once an hour); [Cache.Trim]
// removes the entries unused for [MaxUnused], so the cache does not grow
// with every changed build for ever.
//
// An entry from elsewhere (a shared remote cache) enters only through
// [Cache.Import], which makes the same checks on its record, refuses one
// whose outputs declare more bytes than its caller accepts before fetching
// any, and re-hashes every file as it is downloaded; builds then restore it
// from the local cache like any other. Such an entry's folder also holds
// origin.json, where it came from and whose signed record it was
// ([Cache.Origin]), so that every later build it serves can say so.
package actioncache

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/digestmemo"
	"github.com/mkrelease/mkrelease/internal/treehash"
)

// Cache is an action cache rooted at Dir.
type Cache struct {
	Dir string
	// Digests remembers the digests of stored files, by their identity on
	// disk: device, inode, size and modification time, which every write
	// changes ([digestmemo.Memo.SHA256Linked]; Put remembers the files it
	// stores), so that restoring an unchanged entry again does not hash
	// it again; the zero Memo re-hashes every restored file every time.
	Digests digestmemo.Memo

	// openDst opens a file Restore writes; nil means os.OpenFile. Tests
	// set it to make the destination fail (a full disk, a read-only file
	// system).
	openDst func(name string, flag int, perm fs.FileMode) (dstFile, error)
	// clone makes dst a reflink of src; nil means the platform's
	// ([reflink]). Tests set it to one that fails, to take the copying
	// path whatever the file system, or to one that copies, to take the
	// cloning path on a file system without reflinks.
	clone func(dst, src *os.File) error
}

// cloneFile makes dst, empty and open for writing, a reflink of src.
func (c *Cache) cloneFile(dst, src *os.File) error {
	if c.clone != nil {
		return c.clone(dst, src)
	}
	return reflink(dst, src)
}

// dstFile is what Restore needs of a destination file.
type dstFile interface {
	io.Writer
	Chmod(fs.FileMode) error
	Sync() error
	Close() error
}

// Output is one file an action produced.
type Output struct {
	Path   string      `json:"path"` // slash-separated, relative to the action's output folder
	Size   int64       `json:"size"`
	Mode   fs.FileMode `json:"mode"` // 0644 or 0755
	SHA256 string      `json:"sha256"`
}

// Entry is the record of a cached action.
type Entry struct {
	Key     string   `json:"key"`
	Step    string   `json:"step"`
	Target  string   `json:"target"`
	Outputs []Output `json:"outputs"`
}

// CorruptError describes an entry that failed verification. Restore has
// deleted the entry by the time it returns one; running the action again
// replaces it.
type CorruptError struct {
	Key    string
	Reason string
}

// Error says which entry is damaged and why.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("action cache entry %s is corrupt (%s)", e.Key, e.Reason)
}

// WriteError reports that Restore could not write an output into the
// destination. The entry is intact and kept; the destination's file system
// is at fault, and Remedy says what to do about it.
type WriteError struct {
	Key    string // the entry being restored
	Path   string // the destination file or folder that could not be written
	Remedy string
	Err    error // the underlying error, e.g. syscall.ENOSPC
}

// Error names the destination, the cause and the remedy.
func (e *WriteError) Error() string {
	return fmt.Sprintf("restoring action cache entry %s: cannot write %s: %v; %s (the cache entry is intact)",
		e.Key, e.Path, e.Err, e.Remedy)
}

// Unwrap returns the underlying error.
func (e *WriteError) Unwrap() error { return e.Err }

func newWriteError(key, dst, p string, err error) *WriteError {
	var remedy string
	switch {
	case errors.Is(err, syscall.ENOSPC):
		remedy = "the disk holding " + dst + " is full: free some space there and build again"
	case errors.Is(err, syscall.EDQUOT):
		remedy = "the disk quota on the file system holding " + dst + " is used up: free some space or raise the quota, and build again"
	case errors.Is(err, syscall.EROFS):
		remedy = "the file system holding " + dst + " is read-only: build into a writable folder"
	case errors.Is(err, syscall.EIO):
		remedy = "the device holding " + dst + " reported an I/O error: check the disk (dmesg) and build again"
	default:
		remedy = "make sure " + dst + " is a writable folder and build again"
	}
	return &WriteError{Key: key, Path: p, Remedy: remedy, Err: err}
}

func (c *Cache) entryDir(key string) string {
	return filepath.Join(c.Dir, "actions", key[:2], key)
}

// ErrMiss reports that no entry exists for a key.
var ErrMiss = errors.New("action cache miss")

// Restore copies the outputs of the entry for key into dst (which must
// exist), checking the entry against the action asked for (its step, target
// and declared outputs) and re-hashing each file; the package doc lists the
// checks. It returns ErrMiss when there is no entry, a *CorruptError after
// deleting an entry that fails a check, and a *WriteError, keeping the
// entry, when dst cannot be written. In every failing case nothing is left
// in dst.
func (c *Cache) Restore(key, step, target string, outputs []string, dst string) (*Entry, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	declared, err := canonicalOutputs(outputs)
	if err != nil {
		return nil, fmt.Errorf("restore step %s [%s]: %w", step, target, err)
	}
	dir := c.entryDir(key)
	corrupt := func(reason string) (*Entry, error) {
		discard(dir)
		return nil, &CorruptError{Key: key, Reason: reason}
	}
	data, err := os.ReadFile(filepath.Join(dir, "entry.json"))
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(dir); serr == nil {
			return corrupt("the entry's folder has no entry.json (a store or removal was cut short)")
		}
		return nil, ErrMiss
	}
	if err != nil {
		return corrupt("unreadable entry.json: " + err.Error())
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return corrupt("unreadable entry.json: " + err.Error())
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return corrupt("entry.json holds more than one JSON value")
	}
	if reason := e.check(key, step, target, declared); reason != "" {
		return corrupt(reason)
	}
	if reason := checkStored(filepath.Join(dir, "out"), e.Outputs); reason != "" {
		return corrupt(reason)
	}

	r := restorer{c: c, key: key, dst: dst}
	for _, o := range e.Outputs {
		reason, err := r.copy(filepath.Join(dir, "out", filepath.FromSlash(o.Path)), o)
		if err != nil || reason != "" {
			r.cleanup()
			if err != nil {
				return nil, err
			}
			return corrupt(reason)
		}
	}
	markUsed(dir, time.Now())
	return &e, nil
}

// check compares the record with the action asked for and returns why it
// does not match, or "".
func (e *Entry) check(key, step, target string, declared []string) string {
	switch {
	case e.Key != key:
		return fmt.Sprintf("entry.json names key %q", e.Key)
	case e.Step != step:
		return fmt.Sprintf("entry.json names step %q, not %q", e.Step, step)
	case e.Target != target:
		return fmt.Sprintf("entry.json names target %q, not %q", e.Target, target)
	}
	listed := map[string]bool{}
	for _, o := range e.Outputs {
		switch {
		case !canonical(o.Path):
			return fmt.Sprintf("output path %q is not a canonical relative path inside the output folder", o.Path)
		case listed[o.Path]:
			return fmt.Sprintf("output %s is listed twice", o.Path)
		case o.Mode != 0o644 && o.Mode != 0o755:
			return fmt.Sprintf("output %s has mode %#o, not 0644 or 0755", o.Path, uint32(o.Mode))
		case o.Size < 0:
			return fmt.Sprintf("output %s has size %d", o.Path, o.Size)
		case !checksum.IsSHA256(o.SHA256):
			return fmt.Sprintf("output %s has sha256 %q, not 64 lowercase hex digits", o.Path, o.SHA256)
		}
		listed[o.Path] = true
	}
	var missing, extra []string
	for _, d := range declared {
		if !listed[d] {
			missing = append(missing, d)
		}
		delete(listed, d)
	}
	for p := range listed {
		extra = append(extra, p)
	}
	sort.Strings(extra)
	switch {
	case len(missing) > 0:
		return "declared output(s) not in the entry: " + strings.Join(missing, ", ")
	case len(extra) > 0:
		return "output(s) the step does not declare: " + strings.Join(extra, ", ")
	}
	return ""
}

// checkStored makes sure out holds exactly the listed outputs, as regular
// files of their recorded modes, and nothing else but their parent folders.
func checkStored(out string, outputs []Output) string {
	want := map[string]fs.FileMode{}
	parents := map[string]bool{}
	for _, o := range outputs {
		want[o.Path] = o.Mode
		for d := path.Dir(o.Path); d != "."; d = path.Dir(d) {
			parents[d] = true
		}
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == out {
			if !d.IsDir() {
				return errors.New("out is not a folder")
			}
			return nil
		}
		rel, _ := filepath.Rel(out, p)
		rel = filepath.ToSlash(rel)
		mode, listed := want[rel]
		switch {
		case d.IsDir() && parents[rel]:
			return nil
		case !listed:
			return fmt.Errorf("out/%s is not listed in entry.json", rel)
		case !d.Type().IsRegular():
			return fmt.Errorf("out/%s is not a regular file", rel)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Mode() != mode {
			return fmt.Errorf("out/%s has mode %v, recorded %v", rel, info.Mode(), mode)
		}
		seen[rel] = true
		return nil
	})
	switch {
	case errors.Is(err, fs.ErrNotExist) && len(outputs) == 0:
		return "" // an action without outputs stores no out/ folder
	case err != nil:
		return err.Error()
	}
	for _, o := range outputs {
		if !seen[o.Path] {
			return fmt.Sprintf("output %s is missing from out/", o.Path)
		}
	}
	return ""
}

// restorer copies outputs into dst and remembers what it created, so that a
// failure leaves nothing behind.
type restorer struct {
	c       *Cache
	key     string
	dst     string
	created []string // files and folders, in creation order
}

// copy puts one output in place, a file of its own (a reflink of the
// stored file where the file system makes one, else a copy), synced, and
// checks it against the record. When c.Digests remembers the stored
// file's digest for its identity on disk, the bytes are not hashed again:
// the identity is read again after the copy, and a file changed meanwhile
// is hashed in its copy. Otherwise the bytes are hashed as they are
// copied (a reflink's, from the new file). A problem with the stored file
// is returned as a reason (the entry's fault); a failure to write the
// destination as a *WriteError.
func (r *restorer) copy(from string, o Output) (reason string, err error) {
	to := filepath.Join(r.dst, filepath.FromSlash(o.Path))
	if err := r.mkdirs(path.Dir(o.Path)); err != nil {
		return "", err
	}
	in, err := os.Open(from)
	if err != nil {
		return o.Path + ": " + err.Error(), nil
	}
	defer in.Close()
	before, err := in.Stat()
	if err != nil {
		return o.Path + ": " + err.Error(), nil
	}
	// known: the stored file's digest, remembered for its identity.
	known := false
	if r.c.Digests.Dir != "" {
		sum, n, err := r.c.Digests.SHA256Linked(from)
		if err != nil {
			return o.Path + ": " + err.Error(), nil
		}
		if reason := o.mismatch(n, sum); reason != "" {
			return reason, nil
		}
		known = true
	}
	out, err := r.create(to, o.Mode)
	if err != nil {
		return "", err
	}
	cloned := false
	if f, ok := out.(*os.File); ok {
		cloned = r.c.cloneFile(f, in) == nil
	}
	h := sha256.New()
	var n int64
	var rerr, werr error
	if !cloned {
		var sink io.Writer = h
		if known {
			sink = io.Discard
		}
		// Read at most one byte more than recorded: a grown file is
		// refused without copying all of it.
		n, rerr, werr = copyTo(out, sink, io.LimitReader(in, o.Size+1))
	}
	if werr == nil {
		werr = out.Chmod(o.Mode)
	}
	if werr == nil && rerr == nil {
		werr = out.Sync()
	}
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	switch {
	case rerr != nil:
		return o.Path + ": " + rerr.Error(), nil
	case werr != nil:
		return "", newWriteError(r.key, r.dst, to, werr)
	}
	if known {
		after, err := os.Stat(from)
		if err == nil && sameVersion(before, after) && (cloned || n == o.Size) {
			return "", nil
		}
		// The stored file changed while it was copied: the copy is
		// hashed for what it holds.
	}
	if cloned || known {
		return hashFile(to, o), nil
	}
	return o.mismatch(n, hex.EncodeToString(h.Sum(nil))), nil
}

// create opens the destination file to, new, for writing. A file already
// there (a previous run's, or a name some other file shares) is removed
// first and never written through: the output is a file of its own.
func (r *restorer) create(to string, mode fs.FileMode) (dstFile, error) {
	open := r.c.openDst
	if open == nil {
		open = func(name string, flag int, perm fs.FileMode) (dstFile, error) { return os.OpenFile(name, flag, perm) }
	}
	const flag = os.O_WRONLY | os.O_CREATE | os.O_EXCL
	out, err := open(to, flag, mode)
	if errors.Is(err, fs.ErrExist) {
		if st, serr := os.Lstat(to); serr == nil && !st.IsDir() {
			if rerr := os.Remove(to); rerr != nil {
				return nil, newWriteError(r.key, r.dst, to, rerr)
			}
			out, err = open(to, flag, mode)
		}
	}
	if err != nil {
		return nil, newWriteError(r.key, r.dst, to, err)
	}
	r.created = append(r.created, to)
	return out, nil
}

// hashFile re-hashes the restored file p against its record o and returns
// why it differs, or "".
func hashFile(p string, o Output) string {
	f, err := os.Open(p)
	if err != nil {
		return o.Path + ": " + err.Error()
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.CopyBuffer(h, io.LimitReader(f, o.Size+1), make([]byte, 256<<10))
	if err != nil {
		return o.Path + ": " + err.Error()
	}
	return o.mismatch(n, hex.EncodeToString(h.Sum(nil)))
}

// mismatch says how n bytes with digest sum differ from the recorded
// output o (n may be one byte more than o.Size: readers stop there), or "".
func (o Output) mismatch(n int64, sum string) string {
	switch {
	case n > o.Size:
		return fmt.Sprintf("%s: more than the recorded %d bytes", o.Path, o.Size)
	case n < o.Size:
		return fmt.Sprintf("%s: %d bytes, recorded %d", o.Path, n, o.Size)
	case sum != o.SHA256:
		return fmt.Sprintf("%s: sha256 %s, recorded %s", o.Path, sum, o.SHA256)
	}
	return ""
}

// sameVersion says a and b describe one file, unchanged between the two
// reads: the same file (device and inode), size and modification time.
func sameVersion(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// copyTo copies in to both out and h, telling read errors from write errors.
func copyTo(out io.Writer, h io.Writer, in io.Reader) (n int64, rerr, werr error) {
	buf := make([]byte, 256<<10)
	for {
		k, err := in.Read(buf)
		if k > 0 {
			h.Write(buf[:k])
			w, err := out.Write(buf[:k])
			n += int64(w)
			if err == nil && w < k {
				err = io.ErrShortWrite
			}
			if err != nil {
				return n, nil, err
			}
		}
		if err == io.EOF {
			return n, nil, nil
		}
		if err != nil {
			return n, err, nil
		}
	}
}

// mkdirs creates the folder rel (slash-separated) below dst and its
// parents, remembering the ones it created.
func (r *restorer) mkdirs(rel string) error {
	if rel == "." {
		return nil
	}
	dir := r.dst
	for _, el := range strings.Split(rel, "/") {
		dir = filepath.Join(dir, el)
		err := os.Mkdir(dir, 0o755)
		switch {
		case err == nil:
			r.created = append(r.created, dir)
		case errors.Is(err, fs.ErrExist):
			if st, serr := os.Stat(dir); serr != nil || !st.IsDir() {
				return newWriteError(r.key, r.dst, dir, fmt.Errorf("exists and is not a folder"))
			}
		default:
			return newWriteError(r.key, r.dst, dir, err)
		}
	}
	return nil
}

// cleanup removes what the restorer created, newest first.
func (r *restorer) cleanup() {
	for _, p := range slices.Backward(r.created) {
		os.Remove(p)
	}
	r.created = nil
}

// Put stores the files outputs (relative to src) as the entry for key and
// returns the entry. An existing entry for key is left as it is.
func (c *Cache) Put(key, step, target, src string, outputs []string, log []byte) (*Entry, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	sorted, err := canonicalOutputs(outputs)
	if err != nil {
		return nil, fmt.Errorf("cache step %s [%s]: %w", step, target, err)
	}
	final, tmp, err := c.stageEntry(key)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	e := &Entry{Key: key, Step: step, Target: target, Outputs: []Output{}}
	var fresh []digestmemo.Fresh // by output, as e.Outputs
	for _, p := range sorted {
		from := filepath.Join(src, filepath.FromSlash(p))
		st, err := os.Lstat(from)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", p, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("output %s: not a regular file", p)
		}
		mode := treehash.NormalMode(st.Mode())
		to := filepath.Join(tmp, "out", filepath.FromSlash(p))
		d, err := c.store(from, to, mode)
		if err != nil {
			return nil, fmt.Errorf("write action cache: %w", err)
		}
		fresh = append(fresh, d)
		e.Outputs = append(e.Outputs, Output{Path: p, Size: d.Size, Mode: mode, SHA256: d.SHA256})
	}
	if err := os.WriteFile(filepath.Join(tmp, "log.txt"), log, 0o644); err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	committed, err := commitEntry(tmp, final, data)
	if err != nil {
		return nil, err
	}
	if committed {
		// The next Restore finds these digests instead of reading the
		// files again (an entry stored by another run first is not
		// the files hashed here).
		for i, o := range e.Outputs {
			c.Digests.RememberLinked(filepath.Join(final, "out", filepath.FromSlash(o.Path)), fresh[i])
		}
	}
	return e, nil
}

// stageEntry makes the temporary folder an entry for key is written into,
// beside its final folder (returned too), so that committing it is one
// rename.
func (c *Cache) stageEntry(key string) (final, tmp string, err error) {
	final = c.entryDir(key)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return "", "", fmt.Errorf("write action cache: %w", err)
	}
	tmp, err = os.MkdirTemp(filepath.Dir(final), ".tmp-"+key[:8]+"-*")
	if err != nil {
		return "", "", fmt.Errorf("write action cache: %w", err)
	}
	return final, tmp, nil
}

// commitEntry writes record as tmp's entry.json and renames tmp into
// place as final, and says whether it did. An entry another run stored
// first is kept: it is the same action, so it is not an error, but the
// entry in place is not tmp (committed is false). A folder in the way
// without entry.json (what a removal cut short left, never an entry) is
// discarded, and the rename made again.
func commitEntry(tmp, final string, record []byte) (committed bool, err error) {
	if err := writeSynced(filepath.Join(tmp, "entry.json"), append(record, '\n')); err != nil {
		return false, fmt.Errorf("write action cache: %w", err)
	}
	err = os.Rename(tmp, final)
	if err != nil {
		if _, serr := os.Stat(filepath.Join(final, "entry.json")); serr == nil {
			return false, nil // another run stored it first
		}
		if _, serr := os.Lstat(final); serr == nil {
			discard(final)
			err = os.Rename(tmp, final)
		}
	}
	if err != nil {
		return false, fmt.Errorf("write action cache entry %s: %w (remove the folder %s and build again)", filepath.Base(final), err, final)
	}
	return true, atomicfile.SyncDir(filepath.Dir(final))
}

// discard removes the entry folder dir, however damaged: it is first
// renamed aside to a ".tmp-" name beside it, so that its name is free at
// once even when what it holds cannot be removed (a folder a person made
// read-only); [Cache.Trim] removes what is left of such a folder later.
func discard(dir string) {
	aside := filepath.Join(filepath.Dir(dir), fmt.Sprintf(".tmp-discard-%.8s-%d", filepath.Base(dir), time.Now().UnixNano()))
	if os.Rename(dir, aside) != nil {
		_ = removeTree(dir)
		return
	}
	_ = removeTree(aside)
}

// Log returns the stored output of the action key.
func (c *Cache) Log(key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(c.entryDir(key), "log.txt"))
}

func checkKey(key string) error {
	if !checksum.IsSHA256(key) {
		return fmt.Errorf("action cache key %q is not a sha256 in lowercase hex", key)
	}
	return nil
}

// canonical reports whether p is a clean, slash-separated relative path
// that stays inside the folder it is relative to.
func canonical(p string) bool {
	return p != "" && p != "." && path.Clean(p) == p && !path.IsAbs(p) &&
		!strings.ContainsAny(p, "\\\x00") && filepath.IsLocal(filepath.FromSlash(p))
}

// canonicalOutputs cleans the declared outputs and returns them sorted,
// refusing one that leaves the output folder or is declared twice.
func canonicalOutputs(outputs []string) ([]string, error) {
	seen := map[string]bool{}
	var clean []string
	for _, o := range outputs {
		p := path.Clean(o)
		if !canonical(p) {
			return nil, fmt.Errorf("declared output %q is not a relative path inside the output folder", o)
		}
		if seen[p] {
			return nil, fmt.Errorf("output %q is declared twice", o)
		}
		seen[p] = true
		clean = append(clean, p)
	}
	sort.Strings(clean)
	return clean, nil
}

// store copies the file from into the entry being assembled as to (a
// reflink where the file system makes one, else a copy: never a second
// name of from, which stays the caller's to change), with mode, synced,
// and returns its sha256 and size, which c.Digests may remember for the
// committed entry.
func (c *Cache) store(from, to string, mode fs.FileMode) (digestmemo.Fresh, error) {
	in, err := os.Open(from)
	if err != nil {
		return digestmemo.Fresh{}, err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return digestmemo.Fresh{}, err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return digestmemo.Fresh{}, err
	}
	if c.cloneFile(out, in) != nil {
		_, err = io.Copy(out, in)
	}
	if err == nil {
		err = out.Chmod(mode)
	}
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return digestmemo.Fresh{}, err
	}
	// Hashed from the stored file, after it is written: the record says
	// what the entry holds, whatever happened to from meanwhile.
	return c.Digests.HashLinkedFresh(to)
}

func writeSynced(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// MaxEntrySize bounds an entry record read from outside the local cache
// (a remote cache's action entry): a larger one is refused unread.
const MaxEntrySize = 1 << 20

// Fetch writes the bytes of one output, as another store holds them, to w.
// [Cache.Import] hashes and counts what it writes; Fetch need not.
type Fetch func(o Output, w io.Writer) error

// ErrBlobSize is wrapped by a [Fetch] that learns, before reading them,
// that the bytes it would fetch are not as many as the record says (a
// server announcing another length): the entry is refused as corrupt,
// without its bytes being read.
var ErrBlobSize = errors.New("the blob's size is not the recorded one")

// FetchError reports that [Cache.Import] could not get an output's bytes
// from where they are kept (the server, not the entry, failed).
type FetchError struct {
	Key  string
	Path string
	Err  error
}

// Error names the entry and the output.
func (e *FetchError) Error() string {
	return fmt.Sprintf("fetching output %s of action %s: %v", e.Path, e.Key, e.Err)
}

// Unwrap returns the underlying error.
func (e *FetchError) Unwrap() error { return e.Err }

// TooLargeError reports an entry from elsewhere whose outputs declare more
// bytes, in all, than [Cache.Import]'s caller accepts. Nothing was fetched.
type TooLargeError struct {
	Key string
	// Size is what the outputs declare in all, Max the most accepted.
	Size, Max int64
	// Path is the largest output.
	Path string
}

// Error names the entry, its size and the limit.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("action cache entry %s declares %d bytes of outputs (%s the largest), more than the %d accepted", e.Key, e.Size, e.Path, e.Max)
}

// Import stores an entry that comes from outside the local cache (data is
// its record, as [Cache.Put] writes entry.json; fetch gets each output's
// bytes) as the local entry for key, after the checks [Cache.Restore]
// makes: the record parses strictly, names key, step and target, lists
// exactly the declared outputs with canonical paths, 0644 or 0755 modes
// and sha256 digests, and every file fetched has the recorded size and
// sha256 (it is hashed as it is written, and a longer one is cut off one
// byte past the recorded size). An entry failing a check is a
// [*CorruptError] and nothing is stored; a fetch that fails is a
// [*FetchError]. Before anything is fetched, the sizes the record declares
// are added up: more than maxSize bytes in all is a [*TooLargeError], and
// nothing is fetched or stored (maxSize must be positive). An existing
// local entry for key is left as it is. origin, which says where the
// entry comes from and who vouched for it, is kept with the entry
// ([Cache.Origin]). The caller then restores the entry with
// [Cache.Restore], which checks it again.
func (c *Cache) Import(key, step, target string, outputs []string, data []byte, maxSize int64, origin Origin, fetch Fetch) (*Entry, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	declared, err := canonicalOutputs(outputs)
	if err != nil {
		return nil, fmt.Errorf("import step %s [%s]: %w", step, target, err)
	}
	corrupt := func(reason string) (*Entry, error) {
		return nil, &CorruptError{Key: key, Reason: reason}
	}
	if len(data) > MaxEntrySize {
		return corrupt(fmt.Sprintf("the record is %d bytes, more than %d", len(data), MaxEntrySize))
	}
	var e Entry
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		return corrupt("unreadable record: " + err.Error())
	}
	if dec.Decode(&struct{}{}) != io.EOF {
		return corrupt("the record holds more than one JSON value")
	}
	if e.Outputs == nil {
		e.Outputs = []Output{}
	}
	if reason := e.check(key, step, target, declared); reason != "" {
		return corrupt(reason)
	}
	if err := checkSizes(key, e.Outputs, maxSize); err != nil {
		return nil, err
	}
	final, tmp, err := c.stageEntry(key)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	for _, o := range e.Outputs {
		reason, err := importOutput(key, filepath.Join(tmp, "out", filepath.FromSlash(o.Path)), o, fetch)
		if err != nil {
			return nil, err
		}
		if reason != "" {
			return corrupt(reason)
		}
	}
	if err := writeSynced(filepath.Join(tmp, "log.txt"), []byte(importedLog)); err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	if err := writeOrigin(tmp, origin); err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	rec, err := json.MarshalIndent(&e, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := commitEntry(tmp, final, rec); err != nil {
		return nil, err
	}
	return &e, nil
}

// checkSizes returns a *TooLargeError when outputs (their sizes checked
// not negative) declare more than max bytes in all. The sum saturates at
// the largest int64, so that crafted sizes cannot wrap it round.
func checkSizes(key string, outputs []Output, max int64) error {
	var total int64
	largest := Output{Size: -1}
	for _, o := range outputs {
		if o.Size > largest.Size {
			largest = o
		}
		if o.Size > math.MaxInt64-total {
			total = math.MaxInt64
		} else {
			total += o.Size
		}
	}
	if total > max {
		return &TooLargeError{Key: key, Size: total, Max: max, Path: largest.Path}
	}
	return nil
}

// importOutput fetches one output into to, hashing it, and returns why it
// does not match its record ("" when it does).
func importOutput(key, to string, o Output, fetch Fetch) (reason string, err error) {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return "", fmt.Errorf("write action cache: %w", err)
	}
	f, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", fmt.Errorf("write action cache: %w", err)
	}
	h := sha256.New()
	lw := &limitWriter{w: io.MultiWriter(f, h), left: o.Size + 1}
	ferr := fetch(o, lw)
	werr := lw.err
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(to, o.Mode)
	}
	n := o.Size + 1 - lw.left
	switch sum := hex.EncodeToString(h.Sum(nil)); {
	case werr != nil && !errors.Is(werr, errTooLong):
		return "", fmt.Errorf("write action cache: %w", werr)
	case n > o.Size:
		return fmt.Sprintf("%s: more than the recorded %d bytes", o.Path, o.Size), nil
	case errors.Is(ferr, ErrBlobSize):
		return fmt.Sprintf("%s: %v", o.Path, ferr), nil
	case ferr != nil:
		return "", &FetchError{Key: key, Path: o.Path, Err: ferr}
	case n < o.Size:
		return fmt.Sprintf("%s: %d bytes, recorded %d", o.Path, n, o.Size), nil
	case sum != o.SHA256:
		return fmt.Sprintf("%s: sha256 %s, recorded %s", o.Path, sum, o.SHA256), nil
	}
	return "", nil
}

var errTooLong = errors.New("more bytes than recorded")

// limitWriter passes on at most left bytes and fails the write that would
// pass more, so that an oversized download stops.
type limitWriter struct {
	w    io.Writer
	left int64
	err  error
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	cut := false
	if int64(len(p)) > l.left {
		p, cut = p[:l.left], true
	}
	n, err := l.w.Write(p)
	l.left -= int64(n)
	if err == nil && cut {
		err = errTooLong
	}
	l.err = err
	return n, err
}

// Open opens the stored file of output o of the entry for key, for
// uploading it elsewhere. The caller closes it; its bytes are what Put
// recorded unless the local cache was damaged since, which the reader
// (Import, elsewhere) detects.
func (c *Cache) Open(key string, o Output) (*os.File, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if !canonical(o.Path) {
		return nil, fmt.Errorf("output path %q is not a canonical relative path", o.Path)
	}
	return os.Open(filepath.Join(c.entryDir(key), "out", filepath.FromSlash(o.Path)))
}

// Kept says where the file Keep returns came from.
type Kept int

const (
	// Written: there was no entry; write made the file and it is stored.
	Written Kept = iota
	// Restored: the file was copied from the entry, re-hashed.
	Restored
	// Rewritten: the entry failed a check and was deleted; write made the
	// file again and it is stored.
	Rewritten
)

// Keep makes the file dir/name, which a deterministic writer makes from
// inputs whose digest is key (a wheel, a bundle: the whole of what decides
// their bytes, the writer's own identity included): it restores it from
// the entry for key as Restore does (step and target name what it is), or
// calls write to make it and stores it as Put does. A damaged entry is
// deleted and the file written again; reason then says what was wrong.
func (c *Cache) Keep(key, step, target, dir, name string, write func() error) (o Output, how Kept, reason string, err error) {
	e, err := c.Restore(key, step, target, []string{name}, dir)
	var corrupt *CorruptError
	switch {
	case err == nil:
		return e.Outputs[0], Restored, "", nil
	case errors.As(err, &corrupt):
		how, reason = Rewritten, corrupt.Reason
	case !errors.Is(err, ErrMiss):
		return Output{}, Written, "", err
	}
	if err := write(); err != nil {
		return Output{}, how, reason, err
	}
	if e, err = c.Put(key, step, target, dir, []string{name}, nil); err != nil {
		return Output{}, how, reason, err
	}
	return e.Outputs[0], how, reason, nil
}
