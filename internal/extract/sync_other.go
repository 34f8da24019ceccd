//go:build !linux && !darwin

package extract

import "os"

// syncEachFile: each file is fsynced as it is closed.
const syncEachFile = true

// flushTree fsyncs the root directory where the platform allows it (its
// files are synced as written).
func flushTree(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	_ = f.Sync() // directories cannot be synced everywhere (Windows)
	return nil
}

// renameNoReplace renames old to new unless new exists (not atomically).
func renameNoReplace(old, new string) error {
	return renameChecked(old, new)
}
