// Package actioncache stores the outputs of build actions under the sha256
// of all their inputs (the action key), so that an unchanged action is
// never run twice.
//
// An entry is a folder actions/KK/KEY/ holding entry.json (the key, the step
// and target, and each output's path, size, mode and sha256), log.txt (the
// action's output) and out/ (the files). Entries are assembled under a
// temporary name and renamed into place, so a reader, or a kill at any
// moment, never sees a partial entry. Every served file is re-hashed while it
// is copied out; an entry that does not match its own record is reported,
// deleted and treated as a miss, never served.
package actioncache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/treehash"
)

// Cache is an action cache rooted at Dir.
type Cache struct {
	Dir string
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

// CorruptError describes an entry that failed verification.
type CorruptError struct {
	Key    string
	Reason string
}

// Error says which entry is damaged and why.
func (e *CorruptError) Error() string {
	return fmt.Sprintf("action cache entry %s is corrupt (%s)", e.Key, e.Reason)
}

func (c *Cache) entryDir(key string) string {
	return filepath.Join(c.Dir, "actions", key[:2], key)
}

// ErrMiss reports that no entry exists for a key.
var ErrMiss = errors.New("action cache miss")

// Restore copies the outputs of key into dst (which must exist), verifying
// each against the entry. It returns ErrMiss when there is no entry, and a
// *CorruptError after deleting an entry that fails verification; in both
// cases nothing is left in dst.
func (c *Cache) Restore(key, dst string) (*Entry, error) {
	dir := c.entryDir(key)
	data, err := os.ReadFile(filepath.Join(dir, "entry.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrMiss
	}
	if err != nil {
		return nil, fmt.Errorf("read action cache: %w", err)
	}
	corrupt := func(reason string) (*Entry, error) {
		os.RemoveAll(dir)
		return nil, &CorruptError{Key: key, Reason: reason}
	}
	var e Entry
	if err := json.Unmarshal(data, &e); err != nil {
		return corrupt("unreadable entry.json: " + err.Error())
	}
	if e.Key != key {
		return corrupt("entry.json names key " + e.Key)
	}
	var written []string
	cleanup := func() {
		for _, w := range written {
			os.Remove(w)
		}
	}
	for _, o := range e.Outputs {
		if err := checkRel(o.Path); err != nil {
			cleanup()
			return corrupt(err.Error())
		}
		to := filepath.Join(dst, filepath.FromSlash(o.Path))
		sum, n, err := copyHashed(filepath.Join(dir, "out", filepath.FromSlash(o.Path)), to, o.Mode)
		written = append(written, to)
		switch {
		case err != nil:
			cleanup()
			return corrupt(o.Path + ": " + err.Error())
		case n != o.Size:
			cleanup()
			return corrupt(fmt.Sprintf("%s: %d bytes, recorded %d", o.Path, n, o.Size))
		case sum != o.SHA256:
			cleanup()
			return corrupt(fmt.Sprintf("%s: sha256 %s, recorded %s", o.Path, sum, o.SHA256))
		}
	}
	return &e, nil
}

// Put stores the files outputs (relative to src) as the entry for key and
// returns the entry. An existing entry for key is left as it is.
func (c *Cache) Put(key, step, target, src string, outputs []string, log []byte) (*Entry, error) {
	final := c.entryDir(key)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".tmp-"+key[:8]+"-*")
	if err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	defer os.RemoveAll(tmp) // no-op after the rename
	e := &Entry{Key: key, Step: step, Target: target}
	sorted := append([]string(nil), outputs...)
	sort.Strings(sorted)
	for _, p := range sorted {
		if err := checkRel(p); err != nil {
			return nil, err
		}
		from := filepath.Join(src, filepath.FromSlash(p))
		st, err := os.Lstat(from)
		if err != nil {
			return nil, fmt.Errorf("output %s: %w", p, err)
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("output %s: not a regular file", p)
		}
		mode := treehash.NormalMode(st.Mode())
		sum, n, err := copyHashed(from, filepath.Join(tmp, "out", filepath.FromSlash(p)), mode)
		if err != nil {
			return nil, fmt.Errorf("write action cache: %w", err)
		}
		e.Outputs = append(e.Outputs, Output{Path: p, Size: n, Mode: mode, SHA256: sum})
	}
	if err := os.WriteFile(filepath.Join(tmp, "log.txt"), log, 0o644); err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := writeSynced(filepath.Join(tmp, "entry.json"), append(data, '\n')); err != nil {
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(filepath.Join(final, "entry.json")); serr == nil {
			return e, nil // another run stored it first
		}
		return nil, fmt.Errorf("write action cache: %w", err)
	}
	if err := atomicfile.SyncDir(filepath.Dir(final)); err != nil {
		return nil, err
	}
	return e, nil
}

// Log returns the stored output of the action key.
func (c *Cache) Log(key string) ([]byte, error) {
	return os.ReadFile(filepath.Join(c.entryDir(key), "log.txt"))
}

func checkRel(p string) error {
	if p == "" || filepath.IsAbs(p) || !filepath.IsLocal(filepath.FromSlash(p)) {
		return fmt.Errorf("output path %q is not a relative path inside the output folder", p)
	}
	return nil
}

// copyHashed copies a regular file, fsyncs it and returns its sha256 and size.
func copyHashed(from, to string, mode fs.FileMode) (string, int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return "", 0, err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return "", 0, err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return "", 0, err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(to, mode)
	}
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
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
