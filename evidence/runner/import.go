package runner

import (
	"context"
	"crypto"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/mkrelease/mkrelease/bundle"
	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
)

// BundleWheels opens the bundle at path and returns the digest of every
// wheel in it (the pair and the closure) by file name: exactly the wheels
// evidence for that bundle's target must have been run on. A bundle that
// does not check out is an error naming its findings. The digests are the
// ones the bundle's verified SHA256SUMS lists ([bundle.Opened.Wheels]); a
// caller that opens the bundle anyway reads them there instead.
func BundleWheels(ctx context.Context, path string) (map[string]string, error) {
	opened, rep, err := bundle.Open(ctx, path)
	if err != nil {
		return nil, err
	}
	defer opened.Close()
	if err := rep.Err(); err != nil {
		return nil, err
	}
	return opened.Wheels, nil
}

// wheelDigests hashes the wheels of an extracted bundle.
func wheelDigests(root string) (map[string]string, error) {
	out := map[string]string{}
	for _, sub := range []string{"wheels", "dependencies"} {
		for _, p := range dist.WheelFiles(filepath.Join(root, sub)) {
			sha, _, err := checksum.File(p)
			if err != nil {
				return nil, err
			}
			out[filepath.Base(p)] = sha
		}
	}
	return out, nil
}

// ImportOptions say where evidence goes and what it must match.
type ImportOptions struct {
	// Dist is the release folder holding the target's bundle; the
	// evidence is copied into it.
	Dist        string
	TrustedKeys []crypto.PublicKey
}

// Import accepts evidence produced on another machine: it checks the
// archive at path (and the signed statements beside it) against the exact
// wheels of the target's bundle in Dist, and only when every check holds
// copies the archive, the statements and their sidecars into Dist, each
// atomically. The report is returned either way; a refusal is its Err.
func Import(ctx context.Context, path string, o ImportOptions) (*Report, error) {
	base := filepath.Base(path)
	c, names := dist.Guess(base)
	if c.Kind != dist.KindEvidence {
		return nil, &usageError{fmt.Sprintf("%s: not an evidence archive (%s)", path, dist.NamesOf("NAME", "VERSION").Evidence("TARGET"))}
	}
	target := c.Target
	bundlePath := filepath.Join(o.Dist, names.Bundle(target))
	if _, err := os.Stat(bundlePath); err != nil {
		return nil, &usageError{fmt.Sprintf("%s: no bundle %s for target %s in %s to check the evidence against: import into the release folder it was made for (--dist)", path, filepath.Base(bundlePath), target, o.Dist)}
	}
	wheels, err := BundleWheels(ctx, bundlePath)
	if err != nil {
		return nil, fmt.Errorf("evidence import: %w", err)
	}
	rep, err := Check(ctx, path, CheckOptions{TrustedKeys: o.TrustedKeys, Wheels: wheels})
	if err != nil {
		return nil, err
	}
	if !rep.OK() {
		return rep, rep.Err()
	}
	statements := filepath.Join(filepath.Dir(path), names.EvidenceStatements(target))
	for _, src := range []string{path, statements} {
		dst := filepath.Join(o.Dist, filepath.Base(src))
		if same, _ := sameFile(src, dst); same {
			continue
		}
		sha, err := copyAtomic(src, dst)
		if err != nil {
			return rep, fmt.Errorf("evidence import: %w", err)
		}
		if err := dist.WriteSidecar(dst, sha); err != nil {
			return rep, fmt.Errorf("evidence import: %w", err)
		}
	}
	return rep, nil
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}

// copyAtomic copies src to dst through a temporary name and returns the
// sha256 of what it wrote.
func copyAtomic(src, dst string) (string, error) {
	in, err := os.Open(src)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := atomicfile.Create(dst, 0o644)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	if _, err := io.Copy(io.MultiWriter(out, h), in); err != nil {
		out.Abort()
		return "", fmt.Errorf("copy %s: %w", src, err)
	}
	if err := out.Commit(); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// usageError is input that cannot be used (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) ExitCode() int { return 2 }
