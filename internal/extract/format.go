package extract

import (
	"bytes"
	"strconv"
)

// Format names reported in Report.Format.
const (
	FormatTar    = "tar"
	FormatTarGz  = "tar.gz"
	FormatTarXz  = "tar.xz"
	FormatTarBz2 = "tar.bz2"
	FormatTarZst = "tar.zst"
	FormatZip    = "zip"
)

// headLen is how many leading bytes identify needs: one tar header block.
const headLen = 512

// Magic numbers, checked in this fixed order.
var (
	zipMagic      = []byte("PK\x03\x04")
	zipEmptyMagic = []byte("PK\x05\x06")
	gzipMagic     = []byte{0x1f, 0x8b}
	xzMagic       = []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}
	zstdMagic     = []byte{0x28, 0xb5, 0x2f, 0xfd}
	bzip2Block    = []byte{0x31, 0x41, 0x59, 0x26, 0x53, 0x59} // pi: first block header
	bzip2End      = []byte{0x17, 0x72, 0x45, 0x38, 0x50, 0x90} // sqrt(pi): empty stream end
)

// identify recognises the archive format from its first bytes (up to
// headLen). It relies on content only, in a fixed order, so the answer does
// not depend on the file name or on map iteration order (archives.Identify
// does both, and also tries headerless formats such as brotli that can
// match arbitrary bytes). It returns "" when the content is not recognised.
func identify(head []byte) string {
	switch {
	case bytes.HasPrefix(head, zipMagic), bytes.HasPrefix(head, zipEmptyMagic):
		return FormatZip
	case bytes.HasPrefix(head, gzipMagic):
		return FormatTarGz
	case bytes.HasPrefix(head, xzMagic):
		return FormatTarXz
	case bytes.HasPrefix(head, zstdMagic):
		return FormatTarZst
	case isBzip2(head):
		return FormatTarBz2
	case isTarHeader(head):
		return FormatTar
	}
	return ""
}

func isBzip2(head []byte) bool {
	if len(head) < 10 || head[0] != 'B' || head[1] != 'Z' || head[2] != 'h' || head[3] < '1' || head[3] > '9' {
		return false
	}
	return bytes.Equal(head[4:10], bzip2Block) || bytes.Equal(head[4:10], bzip2End)
}

// isTarHeader reports whether block is a tar header with a valid checksum,
// or an all-zero block (an empty archive; a zero-length input is refused). Every tar flavour (v7, ustar,
// GNU, PAX) has the checksum; only some have a magic string.
func isTarHeader(block []byte) bool {
	if len(block) < headLen {
		return false
	}
	block = block[:headLen]
	field := block[148:156]
	allZero := true
	for _, c := range block {
		if c != 0 {
			allZero = false
			break
		}
	}
	if allZero {
		return true
	}
	want, err := strconv.ParseInt(string(bytes.Trim(field, " \x00")), 8, 64)
	if err != nil {
		return false
	}
	var unsigned, signed int64
	for i, c := range block {
		if 148 <= i && i < 156 {
			c = ' '
		}
		unsigned += int64(c)
		signed += int64(int8(c))
	}
	return want == unsigned || want == signed
}
