package actioncache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Origin says where an entry [Cache.Import] took from elsewhere came from:
// kept beside its entry.json as origin.json, so that a build served from
// the local cache later can still say (in its provenance) that the
// outputs were built elsewhere, and by whom.
type Origin struct {
	// Cache names the store the entry came from (a remote cache's URL).
	Cache string `json:"cache"`
	// Writer is the key id of the writer whose signed record the entry
	// is ("" when an mkrelease from before signed records imported it).
	Writer string `json:"writer"`
}

const (
	// originFile is the name of the origin record in an imported entry's
	// folder.
	originFile = "origin.json"
	// importedLog is the log.txt of an imported entry: the action's
	// output is not kept elsewhere. An entry whose log.txt is exactly
	// this and that has no origin.json was imported by an mkrelease that
	// recorded no origin, and did not check who wrote the record.
	importedLog = "(restored from another cache: the action's output is not kept there)\n"
	// maxOrigin bounds what Origin reads of origin.json.
	maxOrigin = 64 << 10
)

// writeOrigin writes o as origin.json into the entry folder being
// assembled, dir.
func writeOrigin(dir string, o Origin) error {
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return err
	}
	return writeSynced(filepath.Join(dir, originFile), append(data, '\n'))
}

// Origin says where the local entry for key came from: imported is false
// for an entry built on this machine ([Cache.Put]) and when there is no
// entry; true for one [Cache.Import] took, with its [Origin]. An entry an
// mkrelease from before origins imported is imported with an Origin whose
// Writer is "": nobody checked who wrote its record, and the caller
// should not serve it ([Cache.Forget]). An origin.json that cannot be
// read is an error naming it.
func (c *Cache) Origin(key string) (o Origin, imported bool, err error) {
	if err := checkKey(key); err != nil {
		return Origin{}, false, err
	}
	dir := c.entryDir(key)
	name := filepath.Join(dir, originFile)
	data, err := readAtMost(name, maxOrigin)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		log, lerr := readAtMost(filepath.Join(dir, "log.txt"), int64(len(importedLog)))
		return Origin{}, lerr == nil && string(log) == importedLog, nil
	case err != nil:
		return Origin{}, true, fmt.Errorf("action cache entry %s: %w", key, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return Origin{}, true, fmt.Errorf("action cache entry %s: %s is unreadable: %v", key, name, err)
	}
	return o, true, nil
}

// readAtMost reads the file name when it holds at most limit bytes; a
// longer one is an error.
func readAtMost(name string, limit int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return data, nil
}

// Forget removes the entry for key, whatever state it is in (renamed
// aside first, as a damaged entry is, so that its name is free at once):
// the next [Cache.Restore] is a miss and the next [Cache.Put] stores the
// action again. Forgetting a missing entry does nothing.
func (c *Cache) Forget(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	dir := c.entryDir(key)
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	discard(dir)
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("action cache entry %s could not be removed: remove the folder %s", key, dir)
	}
	return nil
}
