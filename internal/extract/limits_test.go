package extract

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// manyMembers is more members than DefaultMaxEntries allows.
const manyMembers = 1_100_000

// writeManyZip writes a zip of n empty stored members, with zip64 end
// records (as any zip of 65,535 members or more has), straight to w: a
// local header per member, then the central directory. It holds nothing
// in memory per member, unlike archive/zip's writer.
func writeManyZip(w io.Writer, n int) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	le := binary.LittleEndian
	name := func(i int) string { return fmt.Sprintf("m%07d", i) }
	var off uint64
	local := make([]byte, 30)
	le.PutUint32(local[0:], 0x04034b50)
	le.PutUint16(local[4:], 20)    // version needed
	le.PutUint16(local[12:], 0x21) // date: 1980-01-01
	for i := range n {
		nm := name(i)
		le.PutUint16(local[26:], uint16(len(nm)))
		bw.Write(local)
		bw.WriteString(nm)
		off += uint64(len(local) + len(nm))
	}
	cdOff := off
	central := make([]byte, 46)
	le.PutUint32(central[0:], 0x02014b50)
	le.PutUint16(central[4:], 20) // made by
	le.PutUint16(central[6:], 20) // needed
	le.PutUint16(central[14:], 0x21)
	var localOff uint64
	for i := range n {
		nm := name(i)
		le.PutUint16(central[28:], uint16(len(nm)))
		le.PutUint32(central[42:], uint32(localOff))
		bw.Write(central)
		bw.WriteString(nm)
		off += uint64(len(central) + len(nm))
		localOff += uint64(30 + len(nm))
	}
	cdSize := off - cdOff
	end64 := make([]byte, 56)
	le.PutUint32(end64[0:], 0x06064b50)
	le.PutUint64(end64[4:], 44)
	le.PutUint16(end64[12:], 45)
	le.PutUint16(end64[14:], 45)
	le.PutUint64(end64[24:], uint64(n))
	le.PutUint64(end64[32:], uint64(n))
	le.PutUint64(end64[40:], cdSize)
	le.PutUint64(end64[48:], cdOff)
	bw.Write(end64)
	locator := make([]byte, 20)
	le.PutUint32(locator[0:], 0x07064b50)
	le.PutUint64(locator[8:], off)
	le.PutUint32(locator[16:], 1)
	bw.Write(locator)
	end := make([]byte, 22)
	le.PutUint32(end[0:], 0x06054b50)
	le.PutUint16(end[8:], 0xffff)
	le.PutUint16(end[10:], 0xffff)
	le.PutUint32(end[12:], 0xffffffff)
	le.PutUint32(end[16:], 0xffffffff)
	bw.Write(end)
	return bw.Flush()
}

// writeManyTar writes a ustar archive of n empty files to w,
// gzip-compressed (at the fastest level) when gz is set. The headers are
// one template with the name and checksum filled in: archive/tar's writer
// takes seconds for a million of them.
func writeManyTar(w io.Writer, n int, gz bool) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var out io.Writer = bw
	var zw *gzip.Writer
	if gz {
		zw, _ = gzip.NewWriterLevel(bw, gzip.BestSpeed)
		out = zw
	}
	hdr := make([]byte, 512)
	copy(hdr[100:], "0000644\x00")     // mode
	copy(hdr[108:], "0000000\x00")     // uid
	copy(hdr[116:], "0000000\x00")     // gid
	copy(hdr[124:], "00000000000\x00") // size
	copy(hdr[136:], "15270436400\x00") // mtime: 1793491200
	hdr[156] = tar.TypeReg
	copy(hdr[257:], "ustar\x0000")
	base := 8 * int(' ') // the checksum field counts as spaces
	for i, c := range hdr {
		if i < 148 || i >= 156 {
			base += int(c)
		}
	}
	for i := range n {
		name := fmt.Sprintf("m%07d", i)
		copy(hdr[:100], name)
		sum := base
		for _, c := range []byte(name) {
			sum += int(c)
		}
		copy(hdr[148:], fmt.Sprintf("%06o\x00 ", sum))
		if _, err := out.Write(hdr); err != nil {
			return err
		}
	}
	if _, err := out.Write(make([]byte, 1024)); err != nil { // the end-of-archive marker
		return err
	}
	if zw != nil {
		if err := zw.Close(); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// An archive of 1.1 million empty members is refused on its member count
// before anything is extracted: no file or folder is made, and it takes
// the time of reading its headers (a zip's end record announces the
// count; a tar's headers are read first, decompressed, writing nothing),
// not the quarter of an hour that making a million files took. Each
// archive writer is checked first on three members, which extract.
func TestManyMembersRefusedBeforeWriting(t *testing.T) {
	if testing.Short() {
		t.Skip("writes archives of 1.1 million members (about 20 s)")
	}
	for _, tc := range []struct {
		format string
		write  func(w io.Writer, n int) error
		detail string
	}{
		{FormatZip, writeManyZip, "the archive announces 1100000 entries, more than the limit of 1048576 (nothing was extracted)"},
		{FormatTarGz, func(w io.Writer, n int) error { return writeManyTar(w, n, true) }, "the archive holds more than 1048576 entries (counted from its headers, before anything was extracted)"},
		{FormatTar, func(w io.Writer, n int) error { return writeManyTar(w, n, false) }, "the archive holds more than 1048576 entries (counted from its headers, before anything was extracted)"},
	} {
		t.Run(tc.format, func(t *testing.T) {
			dir := t.TempDir()
			write := func(n int) string {
				t.Helper()
				p := filepath.Join(dir, fmt.Sprintf("a%d.%s", n, tc.format))
				f, err := os.Create(p)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				if err := tc.write(f, n); err != nil {
					t.Fatal(err)
				}
				return p
			}
			small := write(3)
			rep, err := ExtractFile(t.Context(), small, filepath.Join(dir, "small"), Options{})
			if err != nil || rep.Files != 3 || rep.Format != tc.format {
				t.Fatalf("the three-member %s: %+v, %v", tc.format, rep, err)
			}

			start := time.Now()
			big := write(manyMembers)
			st, _ := os.Stat(big)
			t.Logf("wrote %d members, %d bytes, in %v", manyMembers, st.Size(), time.Since(start).Round(time.Millisecond))

			// The previous code made a million files first: a deadline
			// far above the count check's time ends such a run.
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			parent := filepath.Join(dir, "x")
			if err := os.Mkdir(parent, 0o755); err != nil {
				t.Fatal(err)
			}
			start = time.Now()
			rep, err = ExtractFile(ctx, big, filepath.Join(parent, "out"), Options{Settings: Settings{Entries: "max_entries"}})
			took := time.Since(start)
			t.Logf("refused in %v: %v", took.Round(time.Millisecond), err)
			var ee *EntryError
			if !errors.As(err, &ee) || !errors.Is(err, ErrTooMany) || ee.Detail != tc.detail {
				t.Fatalf("ExtractFile = %v, want ErrTooMany: %s", err, tc.detail)
			}
			if !strings.Contains(err.Error(), "raise max_entries if its number of entries is expected") {
				t.Errorf("the refusal does not name the setting: %v", err)
			}
			if rep.Files != 0 || rep.Dirs != 0 || rep.Bytes != 0 {
				t.Errorf("made %d files and %d folders (%d bytes) before refusing", rep.Files, rep.Dirs, rep.Bytes)
			}
			assertNothingLeft(t, parent)
		})
	}
}

// The sizes headers declare are held to the limits before anything is
// written: a second file passing the total, a file passing the file
// limit, or declared bytes passing the ratio against the archive's size
// make no file at all, not the first ones.
func TestDeclaredSizesRefusedBeforeWriting(t *testing.T) {
	ten := strings.Repeat("x", 10)
	zeros := string(make([]byte, 1<<20))
	for _, tc := range []struct {
		name    string
		entries []ent
		limits  Limits
		want    error
	}{
		{"total", []ent{file("a", ten), file("b", ten)}, Limits{MaxTotalBytes: 15}, ErrTooLarge},
		{"file", []ent{file("a", ten), file("b", ten+ten)}, Limits{MaxFileBytes: 15}, ErrTooLarge},
		{"ratio", []ent{file("a", ten), file("zeros", zeros)}, Limits{MaxRatio: 2, RatioAllowance: -1}, ErrBomb},
	} {
		for _, format := range []string{FormatTar, FormatTarGz, FormatZip} {
			if format == FormatTar && tc.want == ErrBomb {
				continue // a plain tar is larger than what it holds
			}
			t.Run(tc.name+"/"+format, func(t *testing.T) {
				var data []byte
				switch format {
				case FormatZip:
					data = makeZip(t, tc.entries...)
				case FormatTarGz:
					data = gzipBytes(t, makeTar(t, tc.entries...))
				default:
					data = makeTar(t, tc.entries...)
				}
				_, rep, err := extractBytes(t, data, Options{Limits: tc.limits})
				var ee *EntryError
				if !errors.As(err, &ee) || !errors.Is(err, tc.want) || !strings.Contains(ee.Detail, "before anything was extracted") {
					t.Fatalf("err = %v, want %v found before extracting", err, tc.want)
				}
				if rep.Files != 0 || rep.Bytes != 0 {
					t.Errorf("wrote %d files, %d bytes before refusing", rep.Files, rep.Bytes)
				}
			})
		}
	}
}
