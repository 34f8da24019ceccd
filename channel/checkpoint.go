package channel

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/pep440"
	"github.com/mkrelease/mkrelease/internal/pyname"
)

// CheckpointFormat is the value of Checkpoint.Format.
const CheckpointFormat = "mkrelease-channel-checkpoint/1"

// Checkpoint is what a client keeps of a channel state it verified (its
// signed statement checked with a trusted key), so that it can refuse the
// channel when it later shows an older state (a rollback or a freeze,
// hiding what was published since), another state under the same
// generation number (a fork), or a newer one that lost or changed a version
// published before. It is small JSON (keys in a fixed order, two-space
// indentation, a trailing newline); see [Checkpoint.Refuses].
type Checkpoint struct {
	// Format is CheckpointFormat.
	Format string `json:"format"`
	// Channel is the absolute path where the state was seen; it is only
	// informative (a copy of the channel elsewhere is the same channel).
	Channel string `json:"channel"`
	// Project, Generation, Published and Newest are channel.json's.
	Project    string `json:"project"`
	Generation int    `json:"generation"`
	Published  string `json:"published"`
	Newest     string `json:"newest"`
	// StateSHA256 is the sha256 of channel.json ("" for an empty channel).
	StateSHA256 string `json:"state_sha256"`
	// KeyID is the trusted key that signed the state (provenance.KeyID).
	KeyID string `json:"key_id"`
	// Versions are the versions published, ascending, each with the digest
	// of its assets.
	Versions []CheckpointVersion `json:"versions"`
	// File is the file the checkpoint was read from ("" when it was not).
	File string `json:"-"`
}

// CheckpointVersion is a published version as a checkpoint records it.
type CheckpointVersion struct {
	// Version is the normalised version.
	Version string `json:"version"`
	// AssetsSHA256 is the sha256 of the version's assets listed as
	// SHA256SUMS lines ("SHA256  NAME\n", sorted by name): a published
	// version never changes, so neither does this.
	AssetsSHA256 string `json:"assets_sha256"`
}

// fill records state s, whose channel.json has the bytes data.
func (cp *Checkpoint) fill(s *State, data []byte) {
	cp.Project, cp.Generation, cp.Published, cp.Newest = s.Project, s.Generation, s.Published, s.Newest
	cp.StateSHA256 = checksum.Bytes(data)
	cp.Versions = []CheckpointVersion{}
	for _, v := range s.Versions {
		cp.Versions = append(cp.Versions, CheckpointVersion{Version: v.Version, AssetsSHA256: assetsDigest(v.Assets)})
	}
}

// assetsDigest is CheckpointVersion.AssetsSHA256 of assets (sorted by
// name, as channel.json lists them).
func assetsDigest(assets []Asset) string {
	var b strings.Builder
	for _, a := range assets {
		fmt.Fprintf(&b, "%s  %s\n", a.SHA256, a.Name)
	}
	return checksum.Bytes([]byte(b.String()))
}

// describe names the state a checkpoint records, for messages.
func (cp *Checkpoint) describe() string {
	if cp.Generation == 0 {
		return "generation 0 (an empty channel)"
	}
	return fmt.Sprintf("generation %d (published %s, newest %s, channel.json sha256 %s)", cp.Generation, cp.Published, cp.Newest, cp.StateSHA256)
}

// Refuses compares now, a state the channel shows, with cp, a state of the
// same channel seen before, and says why now must not be trusted: it is of
// another project; its generation is lower (a rollback); it has the same
// generation with another channel.json (a fork); or it is newer but lacks,
// or lists with other assets, a version cp records (a published version
// never changes or goes). Each message names both states and the remedy;
// nil when now is cp's state or a later one that keeps every version.
func (cp *Checkpoint) Refuses(now *Checkpoint) []string {
	seen := "seen before"
	if cp.File != "" {
		seen = "recorded in " + cp.File
	}
	forget := "if the channel was rolled back on purpose, delete the saved state"
	if cp.File != "" {
		forget = "if the channel was rolled back on purpose, delete " + cp.File
	}
	var out []string
	switch {
	case now.Project != "" && cp.Project != "" && now.Project != cp.Project:
		out = append(out, fmt.Sprintf("the channel serves project %s, the state %s is of project %s's channel: check this channel against a state saved for it", now.Project, seen, cp.Project))
	case now.Generation < cp.Generation:
		out = append(out, fmt.Sprintf("the channel shows %s, older than %s %s: a channel rolled back to an older state hides what was published since (a rollback or freeze attack); "+
			"do not trust it: point it back at generation %d or have its publisher publish again, then verify; %s",
			now.describe(), cp.describe(), seen, cp.Generation, forget))
	case now.Generation == cp.Generation && now.StateSHA256 != cp.StateSHA256:
		out = append(out, fmt.Sprintf("the channel shows %s, but generation %d %s had channel.json sha256 %s: a fork, two different states under one generation number (or a publish after an unnoticed rollback); "+
			"do not trust it: find out which is genuine and restore it; %s", now.describe(), cp.Generation, seen, cp.StateSHA256, forget))
	case now.Generation > cp.Generation:
		missing, changed := cp.Lost(now)
		for _, v := range missing {
			out = append(out, fmt.Sprintf("version %s, published in generation %d %s, is missing from %s: a published version never goes; "+
				"do not trust the channel: find out who published it (a publish after an unnoticed rollback?) and restore the version", v.Version, cp.Generation, seen, now.describe()))
		}
		for _, v := range changed {
			out = append(out, fmt.Sprintf("version %s has other assets in %s than in generation %d %s (assets digest %s, was %s): a published version never changes; "+
				"do not trust the channel: find out who published it and restore the version", v.Version, now.describe(), cp.Generation, seen, now.assets(v.Version), v.AssetsSHA256))
		}
	}
	return out
}

// Lost lists the versions cp records that now lacks (missing) or lists
// with other assets (changed), in cp's order.
func (cp *Checkpoint) Lost(now *Checkpoint) (missing, changed []CheckpointVersion) {
	for _, v := range cp.Versions {
		switch got, ok := now.assetsOf(v.Version); {
		case !ok:
			missing = append(missing, v)
		case got != v.AssetsSHA256:
			changed = append(changed, v)
		}
	}
	return missing, changed
}

// assetsOf returns the assets digest cp records for version v.
func (cp *Checkpoint) assetsOf(v string) (string, bool) {
	for _, w := range cp.Versions {
		if w.Version == v {
			return w.AssetsSHA256, true
		}
	}
	return "", false
}

// assets is assetsOf's digest alone.
func (cp *Checkpoint) assets(v string) string {
	d, _ := cp.assetsOf(v)
	return d
}

// problems lists what is wrong with a checkpoint read from a file.
func (cp *Checkpoint) problems() []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if cp.Format != CheckpointFormat {
		add("format is %q, want %q", cp.Format, CheckpointFormat)
	}
	if cp.Generation < 0 {
		add("negative generation %d", cp.Generation)
	}
	if cp.Generation > 0 {
		if cp.Project == "" || pyname.Valid(cp.Project) != nil || pyname.Normalize(cp.Project) != cp.Project {
			add("project %q is not a normalised project name", cp.Project)
		}
		if !checksum.IsSHA256(cp.StateSHA256) {
			add("state_sha256 %q is not 64 lower-case hex digits", cp.StateSHA256)
		}
		if _, err := parsePublished(cp.Published); err != nil {
			add("published %q: %v", cp.Published, err)
		}
	}
	for _, v := range cp.Versions {
		if pv, err := pep440.Parse(v.Version); err != nil || pv.String() != v.Version {
			add("version %q is not a normalised version", v.Version)
		}
		if !checksum.IsSHA256(v.AssetsSHA256) {
			add("version %s: assets_sha256 %q is not 64 lower-case hex digits", v.Version, v.AssetsSHA256)
		}
	}
	return out
}

// ReadCheckpoint reads a checkpoint written by [Checkpoint.WriteFile]. A
// missing file is an error wrapping fs.ErrNotExist; a file that is not a
// checkpoint is a *UsageError naming it.
func ReadCheckpoint(file string) (*Checkpoint, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("channel state %s: %w", file, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var cp Checkpoint
	err = dec.Decode(&cp)
	if err == nil && dec.More() {
		err = errors.New("more than one JSON value")
	}
	if err == nil {
		if probs := cp.problems(); len(probs) > 0 {
			err = errors.New(strings.Join(probs, "; "))
		}
	}
	if err != nil {
		return nil, &UsageError{Msg: fmt.Sprintf("%s is not a channel state saved by mkrelease verify --save-state (%v); save it again from a channel that verifies", file, err)}
	}
	if cp.Versions == nil {
		cp.Versions = []CheckpointVersion{}
	}
	cp.File = file
	return &cp, nil
}

// WriteFile writes the checkpoint to file, atomically (a reader sees the
// old file or the new one).
func (cp *Checkpoint) WriteFile(file string) error {
	data, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(file, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("channel state %s: %w", file, err)
	}
	return nil
}

// RememberedFile is the file in folder dir that holds the last state seen
// of the channel at dest (a folder path or a file:// URL): its name is the
// sha256 of dest's absolute path, so each channel folder has its own.
func RememberedFile(dir, dest string) (string, error) {
	p, err := newPaths(dest)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(p.dest))
	return filepath.Join(dir, hex.EncodeToString(sum[:])+".json"), nil
}
