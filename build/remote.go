package build

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/mkrelease/mkrelease/build/actioncache"
	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/provenance"
)

// RemoteCache is a shared action cache the compile stage reads when the
// local cache misses, and writes after running an action. It only moves
// bytes: anyone with upload rights can write anything in it. What it
// returns counts only when the record is signed by a trusted writer
// ([Remote.Writers]) and passes [actioncache.Cache.Import]'s checks (the
// record must list exactly the declared outputs, every blob is re-hashed)
// before it reaches the local cache, and builds restore from the local
// cache only. Package remotecache implements it over HTTP, and documents
// where records are kept.
type RemoteCache interface {
	// GetRecord returns writer's record of the action key (writer "":
	// the record kept under the key itself, which no mkrelease writes);
	// an error wrapping actioncache.ErrMiss when there is none.
	GetRecord(ctx context.Context, key, writer string) ([]byte, error)
	// PutRecord stores record as writer's record of key, unless writer
	// has one already (stored is false), or whatever is there when
	// replace is set.
	PutRecord(ctx context.Context, key, writer string, record []byte, replace bool) (stored bool, err error)
	// GetBlob writes the blob stored under its sha256 to w; size is the
	// size expected (the download stops one byte past it). An error
	// wrapping actioncache.ErrMiss when there is none.
	GetBlob(ctx context.Context, sha256 string, size int64, w io.Writer) error
	// HasBlob reports whether a blob is stored.
	HasBlob(ctx context.Context, sha256 string) (bool, error)
	// PutBlob stores a blob.
	PutBlob(ctx context.Context, sha256 string, size int64, r io.Reader) error
	// String names the cache (its URL) in messages.
	String() string
}

// Remote configures the compile stage's use of a remote action cache.
//
// A record of the remote cache counts only when it is signed by one of
// Writers: the outputs it names are then downloaded, checked, and served
// instead of running the action. A record that no trusted writer signed
// (unsigned, signed by another key, or altered since) is ignored with a
// warning naming why, and the action runs here. In Verify mode nothing is
// served: every action the local cache lacks runs here, and each record
// the remote cache holds for it (of a trusted writer, or under its key) is
// compared with what it made, a difference warned about loudly naming the
// writer. A remote cache never fails a build.
type Remote struct {
	Cache RemoteCache
	// Upload stores, for each action run here, its outputs and its record
	// signed by Signer, in Signer's own slot; without a Signer nothing is
	// uploaded.
	Upload bool
	Signer provenance.Signer
	// Writers are the keys whose records are taken ([cache]
	// trusted_writers), in the order their slots are read.
	Writers []crypto.PublicKey
	// Verify serves nothing from the remote cache, and checks its records
	// against the actions run here ([cache] remote_mode = "verify").
	Verify bool
}

// emptySHA256 is the digest of no bytes: an empty output is not fetched.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// trustHint is the remedy named when a record is ignored.
const trustHint = "a record of the remote cache counts only when signed by a key of [cache] trusted_writers in release.toml; the action ran here instead"

// remote is the compile stage's use of a RemoteCache: the first failure of
// the server (down, slow, an error status) is reported once and the rest
// of the run uses the local cache only.
// Actions running side by side share it.
type remote struct {
	cache  RemoteCache
	upload bool
	verify bool
	signer provenance.Signer
	// trusted verifies the writers' signatures (nil: no trusted writer);
	// slots are the writers whose slots are read, their key ids in the
	// order of [cache] trusted_writers, then "" (the record kept under
	// the key itself).
	trusted *provenance.Verifier
	slots   []string
	log     *slog.Logger
	// maxSize is the most bytes one entry's outputs may declare in all
	// ([cache] remote_max_size): a larger entry is not downloaded.
	maxSize int64

	mu  sync.Mutex
	off bool

	// self is the key id of the signer, known once it is ready (an
	// encrypted key is decrypted while the build runs).
	selfOnce sync.Once
	self     string
}

// newRemote sets up the compile stage's use of o.Cache; it reports once
// what the run will take from it.
func newRemote(o *Remote, maxSize int64, log *slog.Logger) (*remote, error) {
	rm := &remote{cache: o.Cache, upload: o.Upload, verify: o.Verify, signer: o.Signer, log: log, maxSize: maxSize}
	seen := map[string]bool{}
	for _, k := range o.Writers {
		id := provenance.KeyID(k)
		if id == "" {
			return nil, fmt.Errorf("[cache] trusted_writers: a %T key cannot be a writer's (ECDSA, RSA and Ed25519 public keys can)", k)
		}
		if !seen[id] {
			seen[id] = true
			rm.slots = append(rm.slots, id)
		}
	}
	rm.slots = append(rm.slots, "")
	if len(o.Writers) > 0 {
		v, err := provenance.NewVerifier(o.Writers...)
		if err != nil {
			return nil, fmt.Errorf("[cache] trusted_writers: %w", err)
		}
		rm.trusted = v
	}
	mode := "trust"
	if rm.verify {
		mode = "verify"
	}
	log.Info("using a remote action cache", "url", o.Cache.String(), "upload", o.Upload, "mode", mode, "trusted_writers", len(rm.slots)-1)
	switch {
	case rm.verify:
		log.Info("the remote cache is checked, not used: every action runs here, and its records are compared with what it makes", "url", o.Cache.String())
	case rm.trusted == nil:
		log.Warn("no [cache] trusted_writers: nothing is taken from the remote cache, whose records count only when a trusted writer signed them",
			"url", o.Cache.String(), "hint", "list the public keys of the machines whose uploads you trust in [cache] trusted_writers of release.toml")
	}
	if rm.upload && rm.signer == nil {
		log.Warn("no signing key: nothing is uploaded to the remote cache (its records are signed by their writer)", "url", o.Cache.String())
		rm.upload = false
	}
	return rm, nil
}

// usable reports whether the remote cache is configured and has not failed.
func (rm *remote) usable() bool {
	if rm == nil || rm.cache == nil {
		return false
	}
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return !rm.off
}

// fail turns the remote cache off for the rest of the run, with the one
// warning. An interrupted build is not the server's failure.
func (rm *remote) fail(ctx context.Context, err error) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if ctx.Err() != nil || rm.off {
		return
	}
	rm.off = true
	rm.log.Warn("the remote cache is not usable; continuing with the local cache only", "url", rm.cache.String(), "problem", err.Error())
}

// selfID is the key id of the signer of uploads ("" when the key could not
// be made ready: the build fails on its own account then).
func (rm *remote) selfID(ctx context.Context) string {
	rm.selfOnce.Do(func() {
		if provenance.Ready(ctx, rm.signer) == nil {
			rm.self = provenance.KeyID(rm.signer.Public())
		}
	})
	return rm.self
}

// slotName names where a record was read, for messages.
func slotName(writer string) string {
	if writer == "" {
		return "under the action key"
	}
	return "slot of writer " + writer
}

// fetched is what the compile stage learns of the remote cache when it
// looks an action up: the slots holding a record that did not verify, so
// that the signer, should it be one of their writers, repairs its own.
type fetched struct {
	badSlots []string
}

// fetch looks key up in the remote cache, in the slot of each trusted
// writer and then under the key itself, and, for the first record a
// trusted writer signed that passes every check, imports the entry into
// the local cache and restores it into dst. A record no trusted writer
// signed is ignored with a warning naming why. An entry whose outputs
// declare more than rm.maxSize bytes is skipped before any of them is
// downloaded, and every download stops at the size its record declares.
// It returns the entry (nil when none was served) and an error only for
// what fails the build (an interrupt, or restoring into dst); an entry
// that cannot be stored in the local cache (a full disk) is skipped with
// a warning, and the action runs here.
func (rm *remote) fetch(ctx context.Context, cache *actioncache.Cache, key string, t config.Target, step config.Step, dst string, rec *ActionRecord, f *fetched, log *slog.Logger) (*actioncache.Entry, error) {
	log = log.With("url", rm.cache.String(), "key", key[:12])
	for _, slot := range rm.slots {
		data, err := rm.cache.GetRecord(ctx, key, slot)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, actioncache.ErrMiss):
			continue
		case err != nil:
			rm.fail(ctx, err)
			return nil, nil
		}
		writer, record, err := openRecord(rm.trusted, key, data)
		if err != nil {
			log.Warn("ignored a record of the remote cache: no trusted writer signed it", "record", slotName(slot), "problem", err.Error(), "hint", trustHint)
			rec.RemoteIgnored = true
			if slot != "" {
				f.badSlots = append(f.badSlots, slot)
			}
			continue
		}
		origin := actioncache.Origin{Cache: rm.cache.String(), Writer: writer}
		e, served, err := rm.take(ctx, cache, key, t, step, dst, record, origin, rec, log.With("writer", writer))
		if err != nil || served || !rm.usable() {
			return e, err
		}
	}
	return nil, nil
}

// take imports the entry record names (a trusted writer's, origin) into
// the local cache and restores it into dst. served is false when the
// entry was refused, with a warning, or the server failed (rm is then off).
func (rm *remote) take(ctx context.Context, cache *actioncache.Cache, key string, t config.Target, step config.Step, dst string, record []byte, origin actioncache.Origin, rec *ActionRecord, log *slog.Logger) (e *actioncache.Entry, served bool, err error) {
	_, err = cache.Import(key, step.Name, t.Name, step.Outputs, record, rm.maxSize, origin, func(o actioncache.Output, w io.Writer) error {
		if o.Size == 0 && o.SHA256 == emptySHA256 {
			return nil
		}
		return rm.cache.GetBlob(ctx, o.SHA256, o.Size, w)
	})
	var corrupt *actioncache.CorruptError
	var fe *actioncache.FetchError
	var large *actioncache.TooLargeError
	switch {
	case ctx.Err() != nil:
		return nil, false, ctx.Err()
	case errors.As(err, &large):
		log.Warn("skipped an entry of the remote cache larger than [cache] remote_max_size; running the action",
			"size", large.Size, "largest", large.Path, "remote_max_size", large.Max,
			"hint", "if this step's outputs really are that large, raise remote_max_size (in bytes) in [cache] of release.toml")
		rec.RemoteRejected = true
		return nil, false, nil
	case errors.As(err, &corrupt):
		log.Warn("refused an entry of the remote cache; running the action", "problem", corrupt.Reason)
		rec.RemoteRejected = true
		return nil, false, nil
	case errors.As(err, &fe) && errors.Is(err, actioncache.ErrMiss):
		log.Warn("refused an entry of the remote cache; running the action", "problem", "output "+fe.Path+" is not in the remote cache")
		rec.RemoteRejected = true
		return nil, false, nil
	case errors.As(err, &fe):
		rm.fail(ctx, err)
		return nil, false, nil
	case err != nil:
		// The local cache could not take the entry (a full disk): the
		// remote cache never fails a build, and what Import wrote is
		// gone. An action that cannot write here either fails on its
		// own account.
		log.Warn("could not store the remote cache's entry in the local cache; running the action", "problem", err.Error())
		return nil, false, nil
	}
	e, err = cache.Restore(key, step.Name, t.Name, step.Outputs, dst)
	switch {
	case errors.As(err, &corrupt):
		log.Warn("discarded a damaged cache entry; running the action again", "problem", corrupt.Reason)
		rec.Rebuilt = true
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("step %s [%s]: %w", step.Name, t.Name, err)
	}
	// The entry in the local cache may be another run's, stored first:
	// what it says of its origin is what is reported.
	rec.RemoteWriter, rec.RemoteCache = origin.Writer, origin.Cache
	if o, imported, oerr := cache.Origin(key); oerr == nil && imported {
		rec.RemoteWriter, rec.RemoteCache = o.Writer, o.Cache
	}
	return e, true, nil
}

// compare reads every record the remote cache holds for the action of e,
// which ran here (in the slot of each trusted writer, and under its key),
// and compares the outputs it names with e's, whoever signed it: a record
// that says what this build made is reported, one that says something else
// is warned about loudly, naming its writer, for it would have served
// other outputs than the action makes. Nothing is downloaded but the
// records: outputs are compared by their sha256. It returns the slots
// holding a record that did not verify, as fetch does.
func (rm *remote) compare(ctx context.Context, e *actioncache.Entry, rec *ActionRecord, log *slog.Logger) []string {
	log = log.With("url", rm.cache.String(), "key", e.Key[:12])
	var bad []string
	for _, slot := range rm.slots {
		data, err := rm.cache.GetRecord(ctx, e.Key, slot)
		switch {
		case ctx.Err() != nil:
			return bad
		case errors.Is(err, actioncache.ErrMiss):
			continue
		case err != nil:
			rm.fail(ctx, err)
			return bad
		}
		writer, record, verr := openRecord(rm.trusted, e.Key, data)
		who := writer
		if verr != nil {
			who = "untrusted"
			record = unverifiedRecord(data)
			if slot != "" {
				bad = append(bad, slot)
			}
		}
		diff := diffRecord(e, record)
		if len(diff) == 0 {
			rec.RemoteMatched = append(rec.RemoteMatched, who)
			log.Info("the remote cache's record matches what ran here", "record", slotName(slot), "writer", who)
			continue
		}
		rec.RemoteMismatched = append(rec.RemoteMismatched, who)
		args := []any{"record", slotName(slot), "writer", who, "differences", diff}
		if verr != nil {
			args = append(args, "signature", verr.Error())
		}
		log.Warn("REMOTE CACHE MISMATCH: a record of the remote cache names other outputs than this action made here; this build's own are used", args...)
	}
	return bad
}

// put uploads a verified entry of the local cache: its blobs first (those
// the server lacks, or all of them when force is set because the server's
// copy was refused), then its record, signed, in the signer's own slot,
// so that a record never names a blob the server does not hold. A record
// the slot holds already is kept, unless it is among badSlots (it did not
// verify): the signer then repairs its own slot. A failure turns the
// remote cache off; it never fails the build.
func (rm *remote) put(ctx context.Context, cache *actioncache.Cache, e *actioncache.Entry, force bool, badSlots []string, log *slog.Logger) {
	stored, err := func() (bool, error) {
		self := rm.selfID(ctx)
		if self == "" {
			return false, errors.New("the signing key is not ready")
		}
		record, err := signRecord(ctx, rm.signer, e)
		if err != nil {
			return false, err
		}
		for _, o := range e.Outputs {
			if !force {
				has, err := rm.cache.HasBlob(ctx, o.SHA256)
				if err != nil {
					return false, err
				}
				if has {
					continue
				}
			}
			f, err := cache.Open(e.Key, o)
			if err != nil {
				return false, fmt.Errorf("reading the local cache entry %s: %w", e.Key, err)
			}
			err = rm.cache.PutBlob(ctx, o.SHA256, o.Size, f)
			f.Close()
			if err != nil {
				return false, err
			}
		}
		repair := false
		for _, s := range badSlots {
			repair = repair || s == self
		}
		return rm.cache.PutRecord(ctx, e.Key, self, record, repair)
	}()
	if err != nil {
		rm.fail(ctx, err)
		return
	}
	if stored {
		log.Info("action uploaded to the remote cache", "key", e.Key[:12])
	} else {
		log.Debug("the remote cache holds this writer's record of the action already; kept", "key", e.Key[:12])
	}
}
