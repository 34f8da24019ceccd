package main

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/channel"
)

// channelStates keeps what verify and publish saw of channels
// (audit.ChannelStates), so that a channel going back to an older state is
// refused: by default the last state verified of each channel folder, one
// file per folder in the cache folder's channels/ (channel.RememberedFile);
// with verify --since FILE or --save-state FILE, those files instead, and
// nothing remembered.
type channelStates struct {
	dir   string              // the remembered states' folder; "" when none is kept
	since *channel.Checkpoint // --since
	save  string              // --save-state
	log   *slog.Logger
}

// newChannelStates returns the states kept in the cache folder (none, with a
// warning, when there is no cache folder).
func newChannelStates(s *session) *channelStates {
	c := &channelStates{log: s.log}
	cache, err := s.g.cacheDir(s.f)
	if err != nil {
		s.log.Warn("the states of channels seen are not kept: a channel rolled back to an older state cannot be recognised", "reason", err)
		return c
	}
	c.dir = filepath.Join(cache, "channels")
	return c
}

// explicit reports whether --since or --save-state was given.
func (c *channelStates) explicit() bool { return c.since != nil || c.save != "" }

// Seen returns --since, or the remembered state of the channel at dest.
func (c *channelStates) Seen(dest string) (*channel.Checkpoint, error) {
	if c.explicit() || c.dir == "" {
		return c.since, nil
	}
	file, err := channel.RememberedFile(c.dir, dest)
	if err != nil {
		// Not a channel folder (none given yet, or another kind of
		// destination): nothing is remembered of it, and whoever opens it
		// says what is wrong with it.
		return nil, nil
	}
	cp, err := channel.ReadCheckpoint(file)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("%w; it is the state remembered of %s: delete it to forget it", err, dest)
	}
	return cp, nil
}

// Verified writes cp to --save-state, or remembers it for the channel at
// dest.
func (c *channelStates) Verified(dest string, cp *channel.Checkpoint) error {
	file := c.save
	if !c.explicit() {
		if c.dir == "" {
			return nil
		}
		var err error
		if file, err = channel.RememberedFile(c.dir, dest); err != nil {
			return err
		}
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return fmt.Errorf("keeping the channel's state: %w", err)
		}
	} else if file == "" {
		return nil
	}
	if err := cp.WriteFile(file); err != nil {
		return err
	}
	c.log.Info("channel state kept", "channel", dest, "project", cp.Project, "generation", cp.Generation, "file", file)
	return nil
}
