package deps

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
	"github.com/mkrelease/mkrelease/internal/pyname"
	"github.com/mkrelease/mkrelease/wheel"
)

// Limits on license files read from a wheel.
const (
	maxLicenseFileBytes  = 1 << 20
	maxLicenseTotalBytes = 8 << 20
)

// isFatalCheck reports whether findings of a wheel check make a wheel
// unusable: damage, unsafe members, a RECORD that does not match, metadata
// that is not the file name's, and anything that installs differently
// depending on the reader or the platform: a zip that readers read
// differently, names that differ only in case (on the case-insensitive
// file systems of macOS and Windows one member overwrites the other, so
// the installed files depend on the member order and the platform; a
// bundle is installed from its lock on any machine that fits its target,
// Linux ones included, with case-insensitive volumes), and an
// entry_points.txt that is not UTF-8 or has a bare carriage return (Python
// ends a line there, other readers do not: the console scripts installed
// would depend on the installer). The other checks (file name spelling,
// metadata style, WHEEL's tag list, PEP 639 license paths) often fail for
// wheels built by older tools without changing what is installed; their
// findings are reported as warnings.
func isFatalCheck(id string) bool {
	switch id {
	case wheel.CheckZip, wheel.CheckUnsafePath, wheel.CheckSymlink, wheel.CheckSpecialFile,
		wheel.CheckDuplicate, wheel.CheckCaseCollision, wheel.CheckDistInfo, wheel.CheckData, wheel.CheckBomb,
		wheel.CheckRecord, wheel.CheckRecordDuplicate, wheel.CheckUnlisted, wheel.CheckMissing,
		wheel.CheckRecordHash, wheel.CheckRecordSize, wheel.CheckWheelFile,
		wheel.CheckNameMismatch, wheel.CheckVersionMismatch, wheel.CheckEntryPoints:
		return true
	}
	return false
}

// LicenseFile is a license document found in a wheel.
type LicenseFile struct {
	// Path is the member's path in the wheel, e.g.
	// "pip-23.0.1.dist-info/LICENSE.txt".
	Path string
	// Data is the member's content; nil when it is larger than 1 MiB (or
	// the wheel's license files exceed 8 MiB together), which a finding
	// reports.
	Data []byte
}

// License is what a wheel's core metadata says about its license.
type License struct {
	// Expression is License-Expression (metadata 2.4, an SPDX expression).
	Expression string
	// Text is the deprecated free-text License field.
	Text string
	// Classifiers are the "License ::" classifiers.
	Classifiers []string
}

// People is who a wheel's core metadata names, for the SBOM's supplier
// and originator.
type People struct {
	Author, AuthorEmail, Maintainer, MaintainerEmail string
}

// wheelInfo is what Resolve reads from a verified wheel.
type wheelInfo struct {
	fn           wheel.Filename
	meta         *wheel.Metadata
	metaSHA256   string
	licenses     []LicenseFile
	findings     []string
	requiresDist []string
}

// readWheel checks the wheel at p and reads its metadata and license
// files. The file is opened once: the check and the reads see the same
// bytes.
func readWheel(p string) (*wheelInfo, error) {
	f, size, err := openWheel(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep, err := wheel.CheckReader(p, f, size)
	if err != nil {
		return nil, err
	}
	var fatal []string
	info := &wheelInfo{fn: rep.Name, meta: rep.Metadata}
	for _, f := range rep.Findings {
		if isFatalCheck(f.Check) {
			fatal = append(fatal, wheel.Describe(f))
		} else {
			info.findings = append(info.findings, wheel.Describe(f))
		}
	}
	if len(fatal) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(fatal, "; "))
	}
	if info.meta == nil {
		return nil, fmt.Errorf("METADATA is missing or unreadable")
	}
	return readContents(p, f, size, info)
}

// readOwnWheel reads the metadata and license files of a wheel mkrelease
// has just written, without the rest of wheel.Check: the writer's output
// is what the validator is tested against, and its digest is already
// known. The zip structure is audited all the same (readContents), and
// the metadata parsed is the METADATA whose digest is recorded.
func readOwnWheel(p string) (*wheelInfo, error) {
	fn, err := wheel.ParseFilename(filepath.Base(p))
	if err != nil {
		return nil, err
	}
	f, size, err := openWheel(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readContents(p, f, size, &wheelInfo{fn: fn})
}

// openWheel opens the regular file p and returns its size.
func openWheel(p string) (*os.File, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, fmt.Errorf("%s is not a regular file", p)
	}
	return f, st.Size(), nil
}

// readContents reads the METADATA digest and the license files of the
// wheel p, of size bytes read from r, whose file name info already holds;
// when info holds no metadata yet, it parses the METADATA it hashes.
//
// The zip structure is audited first (internal/extract/zipaudit, the
// audit of wheel.CheckZip): archive/zip reads the central directory only,
// and a wheel whose local headers, byte ranges or names say something else
// would install other files, or other metadata, than the ones read here.
// The audit reads the headers, not the data, so repeating it after
// wheel.CheckReader costs one small read per member.
func readContents(p string, r io.ReaderAt, size int64, info *wheelInfo) (*wheelInfo, error) {
	audit, err := zipaudit.Audit(r, size)
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", filepath.Base(p), err)
	}
	if err := audit.Err(); err != nil {
		return nil, fmt.Errorf("wheel %s: zip structure: %w; zip readers (pip's zipfile, Go, streaming readers) would not agree on what the wheel holds: rebuild it", filepath.Base(p), err)
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", filepath.Base(p), err)
	}
	distInfo := ""
	for _, f := range zr.File {
		top, _, ok := strings.Cut(f.Name, "/")
		if ok && strings.HasSuffix(top, ".dist-info") {
			name, _, _ := strings.Cut(strings.TrimSuffix(top, ".dist-info"), "-")
			if pyname.Normalize(name) == pyname.Normalize(info.fn.Distribution) {
				distInfo = top
				break
			}
		}
	}
	var metaData []byte
	for _, f := range zr.File {
		if f.Name == distInfo+"/METADATA" {
			if metaData != nil {
				return nil, fmt.Errorf("wheel %s: more than one %s", filepath.Base(p), f.Name)
			}
			data, err := readMember(f, 64<<20)
			if err != nil {
				return nil, err
			}
			metaData = data
		}
	}
	if metaData == nil {
		return nil, fmt.Errorf("wheel %s: no %s/METADATA", filepath.Base(p), info.fn.DistInfo())
	}
	sum := sha256.Sum256(metaData)
	info.metaSHA256 = hex.EncodeToString(sum[:])
	if info.meta == nil {
		md, err := wheel.ParseMetadata(metaData)
		if err != nil {
			return nil, fmt.Errorf("wheel %s: %w", filepath.Base(p), err)
		}
		info.meta = md
	}
	info.requiresDist = info.meta.RequiresDist
	named := map[string]bool{}
	for _, lf := range info.meta.LicenseFiles {
		named[distInfo+"/licenses/"+lf] = true
		named[distInfo+"/"+lf] = true
	}
	total := 0
	for _, f := range zr.File {
		if f.Name == distInfo+"/METADATA" || strings.HasSuffix(f.Name, "/") || !isLicenseMember(distInfo, f.Name, named) {
			continue
		}
		lf := LicenseFile{Path: f.Name}
		if f.UncompressedSize64 <= maxLicenseFileBytes && total+int(f.UncompressedSize64) <= maxLicenseTotalBytes {
			data, err := readMember(f, maxLicenseFileBytes)
			if err != nil {
				return nil, err
			}
			lf.Data = data
			total += len(data)
		} else {
			info.findings = append(info.findings, fmt.Sprintf("license file %s is too large to include (limit %d bytes per file, %d in all)", f.Name, maxLicenseFileBytes, maxLicenseTotalBytes))
		}
		info.licenses = append(info.licenses, lf)
	}
	slices.SortFunc(info.licenses, func(a, b LicenseFile) int { return strings.Compare(a.Path, b.Path) })
	return info, nil
}

// isLicenseMember reports whether name is a license document of the
// .dist-info folder: anything under licenses/ (PEP 639), a file named by a
// License-File field, or a LICENSE*, LICENCE*, COPYING*, NOTICE* or
// AUTHORS* file directly in the folder (where setuptools put them before
// metadata 2.4).
func isLicenseMember(distInfo, name string, named map[string]bool) bool {
	if distInfo == "" {
		return false
	}
	rest, ok := strings.CutPrefix(name, distInfo+"/")
	if !ok {
		return false
	}
	if named[name] || strings.HasPrefix(rest, "licenses/") {
		return true
	}
	if strings.Contains(rest, "/") {
		return false
	}
	upper := strings.ToUpper(path.Base(rest))
	for _, prefix := range []string{"LICENSE", "LICENCE", "COPYING", "NOTICE", "AUTHORS"} {
		if strings.HasPrefix(upper, prefix) {
			return true
		}
	}
	return false
}

func readMember(f *zip.File, limit int64) ([]byte, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", f.Name, limit)
	}
	return data, nil
}

// licenseOf collects the license fields of m.
func licenseOf(m *wheel.Metadata) License {
	l := License{Expression: m.LicenseExpression, Text: m.License}
	for _, c := range m.Classifiers {
		if strings.HasPrefix(c, "License ::") {
			l.Classifiers = append(l.Classifiers, c)
		}
	}
	return l
}

// peopleOf collects the author and maintainer fields of m.
func peopleOf(m *wheel.Metadata) People {
	first := func(field string) string {
		if vs := m.Values(field); len(vs) > 0 {
			return vs[0]
		}
		return ""
	}
	return People{
		Author: first("Author"), AuthorEmail: first("Author-email"),
		Maintainer: first("Maintainer"), MaintainerEmail: first("Maintainer-email"),
	}
}
