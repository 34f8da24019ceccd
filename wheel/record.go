package wheel

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// RecordRow is one line of a wheel's RECORD: a member path, its hash
// ("sha256=" + urlsafe base64 without padding) and its size. The RECORD's
// own row has an empty hash and size.
type RecordRow struct {
	Path string
	Hash string
	Size int64 // -1 when empty
}

// RecordHash renders a sha256 digest the way RECORD writes it.
func RecordHash(sum []byte) string {
	return "sha256=" + base64.RawURLEncoding.EncodeToString(sum)
}

// RecordHashOf hashes data for RECORD.
func RecordHashOf(data []byte) string {
	s := sha256.Sum256(data)
	return RecordHash(s[:])
}

// WriteRecord renders rows as RECORD (CSV, "\n" line ends).
func WriteRecord(rows []RecordRow) ([]byte, error) {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	for _, r := range rows {
		size := ""
		if r.Size >= 0 {
			size = strconv.FormatInt(r.Size, 10)
		}
		if err := w.Write([]string{r.Path, r.Hash, size}); err != nil {
			return nil, err
		}
	}
	w.Flush()
	return b.Bytes(), w.Error()
}

// ParseRecord reads a RECORD file. Rows must have three fields; a hash is
// "sha256=" (or a stronger algorithm) followed by urlsafe base64 without
// padding; sizes are decimal.
func ParseRecord(r io.Reader) ([]RecordRow, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var rows []RecordRow
	for line := 1; ; line++ {
		rec, err := cr.Read()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, fmt.Errorf("RECORD line %d: %w", line, err)
		}
		if len(rec) != 3 {
			return nil, fmt.Errorf("RECORD line %d: %d fields, want path,hash,size", line, len(rec))
		}
		row := RecordRow{Path: rec[0], Hash: rec[1], Size: -1}
		if rec[2] != "" {
			n, err := strconv.ParseInt(rec[2], 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("RECORD line %d: bad size %q", line, rec[2])
			}
			row.Size = n
		}
		if row.Hash != "" {
			algo, digest, ok := strings.Cut(row.Hash, "=")
			if !ok || (algo != "sha256" && algo != "sha384" && algo != "sha512") {
				return nil, fmt.Errorf("RECORD line %d: hash %q: want sha256=<urlsafe base64>", line, row.Hash)
			}
			if _, err := base64.RawURLEncoding.DecodeString(digest); err != nil {
				return nil, fmt.Errorf("RECORD line %d: hash %q is not urlsafe base64 without padding", line, row.Hash)
			}
		}
		rows = append(rows, row)
	}
}
