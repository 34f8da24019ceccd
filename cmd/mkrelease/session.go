package main

import (
	"context"
	"crypto"
	"log/slog"
	"os"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/build/lock"
	"github.com/mkrelease/mkrelease/provenance"
)

// session holds what one invocation loads once: release.toml,
// release.lock, the trusted keys and the signing keys. A verb that runs
// several stages (release: build, evidence run, publish) shares one, so
// release.toml is read once and an encrypted key's password is asked once.
type session struct {
	f   *Factory
	g   *globalOptions
	log *slog.Logger

	cfg    *config.Config
	cfgErr error
	cfgSet bool

	lk     *lock.Lock
	lkErr  error
	lkSet  bool
	keys   map[string][]crypto.PublicKey // by the --key flags, joined
	signer map[string]provenance.Signer  // by the --key flag ("" for release.toml's)
}

// newSession starts the session of one invocation.
func newSession(f *Factory, g *globalOptions) *session {
	return &session{f: f, g: g, log: g.logger(f), keys: map[string][]crypto.PublicKey{}, signer: map[string]provenance.Signer{}}
}

// config loads release.toml, once.
func (s *session) config() (*config.Config, error) {
	if !s.cfgSet {
		s.cfgSet = true
		s.cfg, s.cfgErr = config.Load(s.g.ConfigPath)
	}
	return s.cfg, s.cfgErr
}

// lock loads release.lock, once; a build needs it.
func (s *session) lock() (*lock.Lock, error) {
	if !s.lkSet {
		s.lkSet = true
		s.lk, s.lkErr = lock.Read(s.g.lockPath())
	}
	return s.lk, s.lkErr
}

// lockIfPresent is release.lock when there is one (nil, nil when not):
// publish and verify compare the provenance with it when it is there.
func (s *session) lockIfPresent() (*lock.Lock, error) {
	if _, err := os.Stat(s.g.lockPath()); err != nil {
		return nil, nil
	}
	return s.lock()
}

// signingKey loads the key that signs (--key flagKey, else [signing] key,
// else the local development key), once per key: a password is asked
// once. opts go to provenance.LoadSigner: build passes
// provenance.InBackground, since the build pipeline stops as soon as the
// key fails to open; a verb that signs only at the end of long work
// without watching the key (evidence run, publish, merge) loads it
// before it starts.
func (s *session) signingKey(ctx context.Context, flagKey string, opts ...provenance.LoadOption) (provenance.Signer, error) {
	if sg, ok := s.signer[flagKey]; ok {
		return sg, nil
	}
	cfg, err := s.config()
	if err != nil {
		return nil, err
	}
	sg, err := s.f.signer(ctx, cfg, flagKey, s.log, opts...)
	if err != nil {
		return nil, err
	}
	s.signer[flagKey] = sg
	return sg, nil
}

// trustedKeys loads the public keys an audit trusts (each --key, and
// release.toml's [signing] trusted_keys), once per set of flags.
func (s *session) trustedKeys(flagKeys []string) ([]crypto.PublicKey, error) {
	id := joinKeys(flagKeys)
	if keys, ok := s.keys[id]; ok {
		return keys, nil
	}
	keys, err := trustedKeys(s, flagKeys, s.log)
	if err != nil {
		return nil, err
	}
	s.keys[id] = keys
	return keys, nil
}

func joinKeys(ks []string) string {
	out := ""
	for _, k := range ks {
		out += k + "\x00"
	}
	return out
}
