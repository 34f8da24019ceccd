package artdiff

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// sparseTar is a tar archive whose first entry is a PAX 1.0 sparse file
// of a terabyte (one byte of data at its end) and whose second entry is a
// small file with body tail.
func sparseTar(tail string) []byte {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	sparseMap := "1\n999999999999\n1\n"
	data := sparseMap + strings.Repeat("\x00", 512-len(sparseMap)) + "x"
	// tar.Writer drops GNU.sparse records and refuses to write a PAX
	// header entry: write it as a regular file, then retype it 'x'.
	var records string
	for _, kv := range [][2]string{{"GNU.sparse.major", "1"}, {"GNU.sparse.minor", "0"}, {"GNU.sparse.name", "big"}, {"GNU.sparse.realsize", "1000000000000"}} {
		rec := " " + kv[0] + "=" + kv[1] + "\n"
		n := len(rec) + 2
		records += strconv.Itoa(n) + rec
	}
	must(w.WriteHeader(&tar.Header{Name: "PaxHeaders/big", Typeflag: tar.TypeReg, Size: int64(len(records)), Format: tar.FormatUSTAR}))
	_, err := io.WriteString(w, records)
	must(err)
	must(w.WriteHeader(&tar.Header{Name: "GNUSparseFile.0/big", Mode: 0o644, Size: int64(len(data)), Format: tar.FormatUSTAR}))
	_, err = io.WriteString(w, data)
	must(err)
	must(w.WriteHeader(&tar.Header{Name: "small", Mode: 0o644, Size: int64(len(tail))}))
	_, err = io.WriteString(w, tail)
	must(err)
	must(w.Close())
	out := buf.Bytes()
	out[156] = tar.TypeXHeader
	copy(out[148:156], "        ")
	sum := 0
	for _, c := range out[:512] {
		sum += int(c)
	}
	copy(out[148:156], fmt.Sprintf("%06o\x00 ", sum))
	return out
}

func TestSparseEntry(t *testing.T) {
	a, b := sparseTar("a"), sparseTar("b")
	// The archive really holds a terabyte-long entry.
	tr := tar.NewReader(bytes.NewReader(a))
	h, err := tr.Next()
	if err != nil || h.Name != "big" || h.Size != 1e12 {
		t.Fatalf("sparse entry: %+v, %v", h, err)
	}
	d, err := compareBytes(t, "s.tar", a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d == nil || !slices.Equal(d.Path, []string{"big"}) || d.What != "sparse entry" {
		t.Fatalf("Compare = %#v, want the sparse entry refused", d)
	}
}
