package main

import (
	"context"
	"crypto"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/mkrelease/mkrelease/build/config"
	"github.com/mkrelease/mkrelease/internal/projectfile"
	"github.com/mkrelease/mkrelease/provenance"
)

// devKeyDir is the git-ignored folder of the local development key, next
// to release.toml.
const devKeyDir = ".mkrelease"

// signer resolves the key that signs a build: --key, else [signing] key,
// else the local development key, created on first use (loudly). opts go
// to provenance.LoadSigner.
func (f *Factory) signer(ctx context.Context, cfg *config.Config, flagKey string, log *slog.Logger, opts ...provenance.LoadOption) (provenance.Signer, error) {
	uri := flagKey
	if uri == "" {
		uri = cfg.Signing.Key
	}
	if uri != "" {
		opts = append([]provenance.LoadOption{provenance.WithGetenv(f.Getenv)}, opts...)
		// LoadSigner's errors name the key (file://PATH for a path): no
		// prefix here, or the key would be named twice.
		return provenance.LoadSigner(ctx, uri, func() ([]byte, error) { return f.password(false) }, opts...)
	}
	dir, err := devKeyFolder(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("development signing key: %w", err)
	}
	s, created, err := provenance.DevKey(dir)
	if err != nil {
		return nil, fmt.Errorf("development signing key: %w", err)
	}
	rel := filepath.Join(filepath.Dir(cfg.File), devKeyDir)
	if created {
		log.Warn("created a LOCAL DEVELOPMENT signing key: it proves nothing to anyone else; set [signing] key in release.toml (mkrelease keygen) to sign a real release",
			"key", filepath.Join(rel, "dev.key"), "public", filepath.Join(rel, "dev.pub"))
	} else {
		log.Warn("signing with the LOCAL DEVELOPMENT key, not a release key", "public", filepath.Join(rel, "dev.pub"))
	}
	if gitWouldTrack(ctx, cfg.Dir, filepath.Join(devKeyDir, "dev.key")) {
		log.Warn("the development key's folder is inside a git work tree that does not ignore it: a `git add .` would commit the private key; add /"+devKeyDir+"/ (and the output folder, /dist/) to .gitignore",
			"key", filepath.Join(rel, "dev.key"))
	}
	return s, nil
}

// devKeyFolder is the folder of the development key in the project folder
// dir: the project's own, never one a symbolic link leads to outside the
// project, and holding no link where the key files go, so that a project
// cannot make a build sign with (or trust) a key from elsewhere on the
// machine.
func devKeyFolder(dir string) (string, error) {
	path := filepath.Join(dir, devKeyDir)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return path, nil // created on first use
	}
	path, err := projectfile.Folder(dir, devKeyDir)
	if err != nil {
		return "", err
	}
	for _, name := range []string{provenance.DevKeyName, provenance.DevPublicKeyName} {
		if st, err := os.Lstat(filepath.Join(path, name)); err == nil && !st.Mode().IsRegular() {
			return "", fmt.Errorf("%s is not a regular file (%s): the development key is the project's own file; remove it, and a new key is made", filepath.Join(devKeyDir, name), st.Mode().Type())
		}
	}
	return path, nil
}

// gitWouldTrack reports whether rel (relative to dir) lies in a git work
// tree that does not ignore it, as `git check-ignore` decides: false
// outside a work tree, when git is not installed, or when git cannot say.
func gitWouldTrack(ctx context.Context, dir, rel string) bool {
	git, err := exec.LookPath("git")
	if err != nil {
		return false
	}
	cmd := exec.CommandContext(ctx, git, "-C", dir, "check-ignore", "-q", "--", filepath.ToSlash(rel))
	err = cmd.Run()
	var exit *exec.ExitError
	// check-ignore exits 0 for an ignored path, 1 for one that is not, and
	// 128 outside a work tree.
	return errors.As(err, &exit) && exit.ExitCode() == 1
}

// trustedKeys loads the public keys an audit trusts: each --key, and the
// [signing] trusted_keys of the project's release.toml when there is one. A
// trusted key file that is missing is skipped with a warning; one that is
// not a public key is an error.
func trustedKeys(s *session, flagKeys []string, log *slog.Logger) ([]crypto.PublicKey, error) {
	var keys []crypto.PublicKey
	for _, k := range flagKeys {
		pub, err := provenance.LoadPublicKey(k)
		if err != nil {
			return nil, usageErrorf("--key %s: %v", k, err)
		}
		keys = append(keys, pub)
	}
	if _, err := os.Stat(s.g.ConfigPath); err != nil {
		return keys, nil
	}
	cfg, err := s.config()
	if err != nil {
		return keys, nil // verify audits artifacts; a broken release.toml is check's business
	}
	for _, k := range cfg.Signing.TrustedKeys {
		// Read beneath the project: a link leading out of it is refused,
		// so a project cannot make its auditor trust a key from elsewhere.
		pub, err := provenance.LoadProjectPublicKey(cfg.Dir, k)
		if errors.Is(err, fs.ErrNotExist) {
			log.Warn("trusted key not found; skipped", "key", k)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: [signing] trusted_keys: %w", cfg.File, err)
		}
		keys = append(keys, pub)
	}
	return keys, nil
}
