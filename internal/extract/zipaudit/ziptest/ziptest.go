// Package ziptest builds zip archives byte by byte for tests: well formed
// ones, or ones with a chosen defect (a local header that disagrees with
// the central directory, a wrong data descriptor, overlapping or hidden
// entries, prepended or trailing bytes), which no zip writer would make.
//
// An [Archive] is written in order: Prefix, then for each [Entry] its
// local header, data, Descriptor and After bytes, then the central
// directory, the zip64 end records when Zip64 is set, the end record and
// Trailing. Every field a defect needs is settable; the defaults make a
// valid archive.
package ziptest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
)

// Entry is one member.
type Entry struct {
	Name   string
	Data   []byte // the bytes stored: compressed when Method is 8
	Method uint16
	Flags  uint16
	CRC32  uint32
	USize  uint64 // size of the uncompressed content
	// ExternalAttrs and CreatorVersion go into the central directory
	// header (default: a Unix regular file, mode 0644, made by 0x0314).
	ExternalAttrs  uint32
	CreatorVersion uint16

	// Local header values that differ from the central directory's; nil
	// for the same.
	LocalName   *string
	LocalFlags  *uint16
	LocalMethod *uint16
	LocalCRC32  *uint32
	LocalCSize  *uint32
	LocalUSize  *uint32
	LocalExtra  []byte
	// CentralExtra is the central directory header's extra field.
	CentralExtra []byte
	// Descriptor is written right after the data.
	Descriptor []byte
	// After is written after the entry, belonging to no entry.
	After []byte
	// Offset, when set, is the local header offset the central directory
	// gives instead of the real one (an index into the written archive).
	Offset *int64
	// NoCentral leaves the entry out of the central directory: its bytes
	// are there for streaming readers only.
	NoCentral bool
	// NoLocal writes no local header, data or descriptor: the entry is in
	// the central directory only (with Offset, pointing into another
	// entry's bytes).
	NoLocal bool
}

// Stored returns a stored entry holding data.
func Stored(name string, data []byte) *Entry {
	e := &Entry{Name: name, Data: data, CRC32: crc32.ChecksumIEEE(data), USize: uint64(len(data))}
	e.utf8()
	return e
}

// Deflated returns an entry holding data deflated.
func Deflated(name string, data []byte) *Entry {
	var b bytes.Buffer
	w, _ := flate.NewWriter(&b, flate.BestCompression)
	w.Write(data)
	w.Close()
	e := &Entry{Name: name, Data: b.Bytes(), Method: 8, CRC32: crc32.ChecksumIEEE(data), USize: uint64(len(data))}
	e.utf8()
	return e
}

func (e *Entry) utf8() {
	for i := 0; i < len(e.Name); i++ {
		if e.Name[i] >= 0x80 {
			e.Flags |= 0x800
			return
		}
	}
}

// WithDescriptor moves the CRC-32 and sizes into a data descriptor (with
// its signature), leaving zeros in the local header, as streaming writers
// do.
func (e *Entry) WithDescriptor() *Entry {
	e.Flags |= 0x8
	zero := uint32(0)
	e.LocalCRC32, e.LocalCSize, e.LocalUSize = &zero, &zero, &zero
	e.Descriptor = Descriptor(true, e.CRC32, uint32(len(e.Data)), uint32(e.USize))
	return e
}

// Descriptor renders a data descriptor with 4-byte sizes.
func Descriptor(sig bool, crc, csize, usize uint32) []byte {
	var b []byte
	if sig {
		b = binary.LittleEndian.AppendUint32(b, 0x08074b50)
	}
	b = binary.LittleEndian.AppendUint32(b, crc)
	b = binary.LittleEndian.AppendUint32(b, csize)
	return binary.LittleEndian.AppendUint32(b, usize)
}

// Extra renders one extra field.
func Extra(id uint16, data []byte) []byte {
	b := binary.LittleEndian.AppendUint16(nil, id)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

// UnicodePath renders an Info-ZIP Unicode Path extra field (0x7075)
// giving name for an entry whose header name is header.
func UnicodePath(header, name string) []byte {
	d := []byte{1}
	d = binary.LittleEndian.AppendUint32(d, crc32.ChecksumIEEE([]byte(header)))
	return Extra(0x7075, append(d, name...))
}

// Archive is a zip to build.
type Archive struct {
	Prefix   []byte
	Entries  []*Entry
	Comment  []byte
	Trailing []byte
	// Count, when set, is the entry count the end record gives.
	Count *uint16
	// CDOffsetDelta is added to the central directory offset the end
	// record gives.
	CDOffsetDelta int64
	// Zip64 writes a zip64 end record and locator; Zip64Count, when set,
	// is the entry count the zip64 record gives.
	Zip64      bool
	Zip64Count *uint64

	// Set by Bytes: where each entry's local header is, and where the
	// central directory and the end record are.
	Offsets   []int64
	Central   []int64 // each entry's central directory header (-1: none)
	CDOffset  int64
	EndOffset int64
}

// Bytes renders the archive.
func (a *Archive) Bytes() []byte {
	le := binary.LittleEndian
	var b []byte
	b = append(b, a.Prefix...)
	a.Offsets = a.Offsets[:0]
	for _, e := range a.Entries {
		a.Offsets = append(a.Offsets, int64(len(b)))
		if e.NoLocal {
			continue
		}
		name, flags, method := e.Name, e.Flags, e.Method
		crc, csize, usize := e.CRC32, uint32(len(e.Data)), uint32(e.USize)
		if e.LocalName != nil {
			name = *e.LocalName
		}
		if e.LocalFlags != nil {
			flags = *e.LocalFlags
		}
		if e.LocalMethod != nil {
			method = *e.LocalMethod
		}
		if e.LocalCRC32 != nil {
			crc = *e.LocalCRC32
		}
		if e.LocalCSize != nil {
			csize = *e.LocalCSize
		}
		if e.LocalUSize != nil {
			usize = *e.LocalUSize
		}
		b = le.AppendUint32(b, 0x04034b50)
		b = le.AppendUint16(b, 20)
		b = le.AppendUint16(b, flags)
		b = le.AppendUint16(b, method)
		b = le.AppendUint16(b, 0)      // time
		b = le.AppendUint16(b, 0x5821) // date: 2024-01-01
		b = le.AppendUint32(b, crc)
		b = le.AppendUint32(b, csize)
		b = le.AppendUint32(b, usize)
		b = le.AppendUint16(b, uint16(len(name)))
		b = le.AppendUint16(b, uint16(len(e.LocalExtra)))
		b = append(b, name...)
		b = append(b, e.LocalExtra...)
		b = append(b, e.Data...)
		b = append(b, e.Descriptor...)
		b = append(b, e.After...)
	}
	a.CDOffset = int64(len(b))
	n := 0
	a.Central = a.Central[:0]
	for i, e := range a.Entries {
		if e.NoCentral {
			a.Central = append(a.Central, -1)
			continue
		}
		a.Central = append(a.Central, int64(len(b)))
		n++
		off := a.Offsets[i]
		if e.Offset != nil {
			off = *e.Offset
		}
		made, attrs := e.CreatorVersion, e.ExternalAttrs
		if made == 0 {
			made = 0x0314
		}
		if attrs == 0 {
			attrs = 0o100644 << 16
		}
		b = le.AppendUint32(b, 0x02014b50)
		b = le.AppendUint16(b, made)
		b = le.AppendUint16(b, 20)
		b = le.AppendUint16(b, e.Flags)
		b = le.AppendUint16(b, e.Method)
		b = le.AppendUint16(b, 0)
		b = le.AppendUint16(b, 0x5821)
		b = le.AppendUint32(b, e.CRC32)
		b = le.AppendUint32(b, uint32(len(e.Data)))
		b = le.AppendUint32(b, uint32(e.USize))
		b = le.AppendUint16(b, uint16(len(e.Name)))
		b = le.AppendUint16(b, uint16(len(e.CentralExtra)))
		b = le.AppendUint16(b, 0) // comment
		b = le.AppendUint16(b, 0) // disk
		b = le.AppendUint16(b, 0) // internal attributes
		b = le.AppendUint32(b, attrs)
		b = le.AppendUint32(b, uint32(off))
		b = append(b, e.Name...)
		b = append(b, e.CentralExtra...)
	}
	cdSize := int64(len(b)) - a.CDOffset
	count := uint16(n)
	if a.Count != nil {
		count = *a.Count
	}
	cdOff := a.CDOffset + a.CDOffsetDelta
	if a.Zip64 {
		z := int64(len(b))
		zc := uint64(n)
		if a.Zip64Count != nil {
			zc = *a.Zip64Count
		}
		b = le.AppendUint32(b, 0x06064b50)
		b = le.AppendUint64(b, 44)
		b = le.AppendUint16(b, 45)
		b = le.AppendUint16(b, 45)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, zc)
		b = le.AppendUint64(b, zc)
		b = le.AppendUint64(b, uint64(cdSize))
		b = le.AppendUint64(b, uint64(cdOff))
		b = le.AppendUint32(b, 0x07064b50)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, uint64(z))
		b = le.AppendUint32(b, 1)
	}
	a.EndOffset = int64(len(b))
	b = le.AppendUint32(b, 0x06054b50)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, count)
	b = le.AppendUint16(b, count)
	b = le.AppendUint32(b, uint32(cdSize))
	b = le.AppendUint32(b, uint32(cdOff))
	b = le.AppendUint16(b, uint16(len(a.Comment)))
	b = append(b, a.Comment...)
	return append(b, a.Trailing...)
}

// Ptr returns a pointer to v, for the optional fields.
func Ptr[T any](v T) *T { return &v }
