package dist

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/atomicfile"
	"github.com/mkrelease/mkrelease/internal/checksum"
)

// SidecarPath returns the path of artifact's sidecar: artifact + ".sha256".
func SidecarPath(artifact string) string { return artifact + SidecarSuffix }

// WriteSidecar writes artifact's sidecar, artifact+".sha256", atomically:
// one line "<sha>  <base name of artifact>\n", so that `sha256sum -c` run
// in the artifact's folder checks it. The artifact must exist as a regular
// file; sha is its sha256 in hex.
func WriteSidecar(artifact, sha string) error {
	side := SidecarPath(artifact)
	st, err := os.Lstat(artifact)
	if err != nil {
		return fmt.Errorf("write sidecar %s: %w", side, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("write sidecar %s: %s is not a regular file (%v)", side, artifact, st.Mode().Type())
	}
	data, err := checksum.Sums{{Name: filepath.Base(artifact), SHA256: sha}}.Marshal()
	if err != nil {
		return fmt.Errorf("write sidecar %s: %w", side, err)
	}
	return atomicfile.WriteFile(side, data, 0o644)
}

// VerifySidecar checks the artifact beside sidecar (its name without
// ".sha256") against it. The sidecar must hold exactly one well-formed
// line naming that artifact; a sidecar naming anything else is reported
// as a [checksum.WrongName] finding. The error is for a sidecar that cannot be
// read or parsed; the Report holds what verification found.
func VerifySidecar(ctx context.Context, sidecar string) (checksum.Report, error) {
	return checkSidecar(ctx, sidecar, "")
}

// CheckSidecar is [VerifySidecar] for an artifact the caller may already
// have hashed: sha256 (hex, either case), when not "", is the artifact's
// digest, and the sidecar is compared with it instead of with the
// artifact's content, which is not read again ([checksum.VerifyOptions]
// Known). The sidecar is parsed and judged exactly as VerifySidecar does,
// and the artifact is still looked up, so the report and the errors are
// the ones VerifySidecar gives for an artifact with that digest. A
// malformed sha256 is an error.
func CheckSidecar(ctx context.Context, sidecar, sha256 string) (checksum.Report, error) {
	known := ""
	if sha256 != "" {
		var err error
		if known, err = checksum.NormalDigest(sha256); err != nil {
			return checksum.Report{}, fmt.Errorf("check sidecar %s: %w", sidecar, err)
		}
	}
	return checkSidecar(ctx, sidecar, known)
}

// checkSidecar is VerifySidecar when known is "", else CheckSidecar with
// the lower-case digest known.
func checkSidecar(ctx context.Context, sidecar, known string) (checksum.Report, error) {
	artifact, ok := strings.CutSuffix(sidecar, SidecarSuffix)
	if !ok || artifact == "" || strings.HasSuffix(artifact, string(filepath.Separator)) {
		return checksum.Report{}, fmt.Errorf("%s: a sidecar's name is the artifact's name followed by %s", sidecar, SidecarSuffix)
	}
	sums, err := checksum.ReadSums(sidecar)
	if err != nil {
		return checksum.Report{}, err
	}
	if len(sums) != 1 {
		return checksum.Report{}, fmt.Errorf("%s: lists %d files; a sidecar lists exactly the artifact beside it", sidecar, len(sums))
	}
	base := filepath.Base(artifact)
	if sums[0].Name != base {
		return checksum.Report{Findings: []checksum.Finding{checksum.NewFinding(sums[0].Name, checksum.WrongName,
			fmt.Sprintf("sidecar %s names %q instead of %q", filepath.Base(sidecar), sums[0].Name, base))}}, nil
	}
	var o checksum.VerifyOptions
	if known != "" {
		o.Known = map[string]string{base: known}
	}
	return checksum.Verify(ctx, filepath.Dir(artifact), sums, o)
}
