package wheel

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/csv"
	"strconv"
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
