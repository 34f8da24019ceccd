package wheel

import (
	"archive/zip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/mkrelease/mkrelease/internal/extract/zipaudit"
)

// ReadMetadata reads a wheel's file name and METADATA without checking the
// rest of it: for wheels whose integrity is established otherwise (just
// written by [Write], or verified by digest). Use [Check] for anything
// else.
func ReadMetadata(path string) (Filename, *Metadata, error) {
	fn, err := ParseFilename(filepath.Base(path))
	if err != nil {
		return Filename{}, nil, err
	}
	data, err := MetadataBytes(path)
	if err != nil {
		return Filename{}, nil, err
	}
	md, err := ParseMetadata(data)
	if err != nil {
		return Filename{}, nil, fmt.Errorf("wheel %s: %w", path, err)
	}
	return fn, md, nil
}

// MetadataBytes returns the bytes of a wheel's .dist-info/METADATA as they
// are (the file PEP 658 serves beside a wheel): the one member named
// METADATA in a top-level folder ending in ".dist-info", at most
// checkMaxTextBytes long. Like [ReadMetadata] it checks little else, but
// it refuses a zip that readers would read differently (the structure
// audit of [CheckZip]), so that the METADATA it returns is the one every
// installer sees.
func MetadataBytes(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", path, err)
	}
	audit, err := zipaudit.Audit(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", path, err)
	}
	if err := audit.Err(); err != nil {
		return nil, fmt.Errorf("wheel %s: zip structure: %w; zip readers would not agree on what the wheel holds: rebuild it", path, err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", path, err)
	}
	var found *zip.File
	for _, f := range zr.File {
		dir, rest, ok := strings.Cut(f.Name, "/")
		if ok && rest == "METADATA" && strings.HasSuffix(dir, ".dist-info") {
			if found != nil {
				return nil, fmt.Errorf("wheel %s: more than one .dist-info/METADATA", path)
			}
			found = f
		}
	}
	if found == nil {
		return nil, fmt.Errorf("wheel %s: no .dist-info/METADATA", path)
	}
	if found.UncompressedSize64 > checkMaxTextBytes {
		return nil, fmt.Errorf("wheel %s: METADATA is %d bytes", path, found.UncompressedSize64)
	}
	rc, err := found.Open()
	if err != nil {
		return nil, fmt.Errorf("wheel %s: %w", path, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, checkMaxTextBytes+1))
	if err == nil && len(data) > checkMaxTextBytes {
		err = fmt.Errorf("more than %d bytes", checkMaxTextBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("wheel %s: METADATA: %w", path, err)
	}
	return data, nil
}
