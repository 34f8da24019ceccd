package policies

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/projectfile"
)

// MaxPolicySize is the largest policy file [LoadFiles] reads.
const MaxPolicySize = 1 << 20

//go:embed default/*.rego
var defaultFS embed.FS

// Module is one Rego v1 policy module.
type Module struct {
	// Name names the module in errors, denials and digests: the file's
	// path as configured, or "default/NAME.rego" for a default policy.
	Name string
	// Source is the module's text.
	Source string
}

// SHA256 returns the hex sha256 of the module's source.
func (m Module) SHA256() string {
	sum := sha256.Sum256([]byte(m.Source))
	return hex.EncodeToString(sum[:])
}

// Defaults returns the default policies, by name: package
// mkrelease.release (the deny rules of the release policy) and package mkrelease.lib
// (their helpers and the input's JSON schema). Their names are
// "default/NAME.rego", their path in this package's folder.
func Defaults() []Module {
	entries, err := fs.ReadDir(defaultFS, "default")
	if err != nil {
		panic(fmt.Sprintf("policies: embedded default policies: %v", err)) // the embed pattern guarantees the folder
	}
	mods := make([]Module, 0, len(entries))
	for _, e := range entries {
		name := path.Join("default", e.Name())
		b, err := defaultFS.ReadFile(name)
		if err != nil {
			panic(fmt.Sprintf("policies: embedded default policy %s: %v", name, err))
		}
		mods = append(mods, Module{Name: name, Source: string(b)})
	}
	return mods
}

// isDefault reports whether a module named name is one of [Defaults]:
// its name is that of a default policy, which a user's file may also be
// called ("default/x.rego" in the project), so the embedded folder decides.
func isDefault(name string) bool {
	if !strings.HasPrefix(name, "default/") {
		return false
	}
	_, err := fs.Stat(defaultFS, name)
	return err == nil
}

// LoadFiles reads user policy files, in the order given. Each must be a
// regular file (or a link to one) named *.rego of at most MaxPolicySize
// bytes, and no path may be given twice. Its Module is named by the path
// as given. Errors are *[PolicyError].
func LoadFiles(paths []string) ([]Module, error) {
	return load(paths, func(p string) (string, error) {
		f, err := os.Open(p)
		if err != nil {
			return "", &PolicyError{File: p, Msg: "cannot read it", Err: unwrapPath(err)}
		}
		defer f.Close()
		return readPolicy(p, f)
	})
}

// LoadProjectFiles reads the policy files a release.toml names
// ([policy] files), as LoadFiles does: rels are slash-separated paths
// relative to the project folder dir, each read beneath dir (package
// projectfile), so a symbolic link leading out of the project is refused,
// naming it. Each Module is named by its path as configured, never a path
// of this machine.
func LoadProjectFiles(dir string, rels []string) ([]Module, error) {
	return load(rels, func(rel string) (string, error) {
		f, _, err := projectfile.Open(dir, rel)
		if err != nil {
			return "", &PolicyError{File: rel, Msg: "cannot read it", Err: unwrapPath(err)}
		}
		defer f.Close()
		return readPolicy(rel, f)
	})
}

// load reads the policy files names, in order, with read, checking their
// names: *.rego, none given twice.
func load(names []string, read func(name string) (string, error)) ([]Module, error) {
	mods := make([]Module, 0, len(names))
	seen := map[string]bool{}
	for _, p := range names {
		if filepath.Ext(p) != ".rego" {
			return nil, &PolicyError{File: p, Msg: "not a Rego policy: the file name must end in .rego"}
		}
		key := filepath.Clean(p)
		if seen[key] {
			return nil, &PolicyError{File: p, Msg: "given twice"}
		}
		seen[key] = true
		src, err := read(p)
		if err != nil {
			return nil, err
		}
		mods = append(mods, Module{Name: p, Source: src})
	}
	return mods, nil
}

// readPolicy reads the open policy file f, named p: a regular file of at
// most MaxPolicySize bytes.
func readPolicy(p string, f *os.File) (string, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", &PolicyError{File: p, Msg: "cannot read it", Err: unwrapPath(err)}
	}
	if !fi.Mode().IsRegular() {
		return "", &PolicyError{File: p, Msg: fmt.Sprintf("not a regular file (%s)", fi.Mode().Type())}
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxPolicySize+1))
	if err != nil {
		return "", &PolicyError{File: p, Msg: "cannot read it", Err: unwrapPath(err)}
	}
	if len(b) > MaxPolicySize {
		return "", &PolicyError{File: p, Msg: fmt.Sprintf("larger than %d bytes", MaxPolicySize)}
	}
	return string(b), nil
}

// unwrapPath drops the *fs.PathError around err: PolicyError names the
// file already.
func unwrapPath(err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err
	}
	return err
}
