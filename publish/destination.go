package publish

import (
	"context"

	"github.com/mkrelease/mkrelease/channel"
)

// Destination is where a release is published: it says what publishing a
// release would do there (the plan the policies read) and then publishes
// it in one step, or not at all. The folder channel (package channel) is
// the first; a remote channel implements the same two calls.
type Destination interface {
	// Plan states the facts of publishing r: the assets as they would be
	// published, the versions already there, whether the same version is
	// published with the same bytes. It writes nothing.
	Plan(ctx context.Context, r channel.Release) (*channel.Plan, error)
	// Exists reports whether the destination holds a published state.
	Exists() bool
	// Publish publishes r atomically: readers see the old state or the
	// new one, never a mix.
	Publish(ctx context.Context, r channel.Release) (*channel.Result, error)
}

// folderChannel is the folder (or file:// URL) channel as a Destination.
type folderChannel struct {
	dest string
	ch   *channel.Channel
}

// OpenFolder opens the channel at dest (a folder or a file:// URL) as a
// Destination.
func OpenFolder(dest string) (Destination, error) {
	ch, err := channel.Open(dest)
	if err != nil {
		return nil, err
	}
	return &folderChannel{dest: dest, ch: ch}, nil
}

// Plan plans against the state the channel showed when it was opened.
func (f *folderChannel) Plan(ctx context.Context, r channel.Release) (*channel.Plan, error) {
	return f.ch.Plan(ctx, r)
}

// Exists reports whether the channel has published a generation.
func (f *folderChannel) Exists() bool { return f.ch.State().Generation > 0 }

// Publish takes the channel's lock and decides again under it.
func (f *folderChannel) Publish(ctx context.Context, r channel.Release) (*channel.Result, error) {
	return channel.Publish(ctx, f.dest, r)
}
