package wheel_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/extract"
	zt "github.com/mkrelease/mkrelease/internal/extract/zipaudit/ziptest"
	"github.com/mkrelease/mkrelease/wheel"
)

// chkRaw builds the wheel byte by byte (package ziptest) instead of with
// archive/zip, so that a test can give it defects no writer makes: edit
// changes the entries (RECORD is last) or the archive before it is
// rendered.
func chkRaw(t testing.TB, w *chkWheel, edit func(a *zt.Archive)) (*zt.Archive, []byte) {
	t.Helper()
	w.build(t) // computes RECORD
	a := &zt.Archive{}
	for _, m := range w.members {
		e := zt.Deflated(m.name, []byte(m.data))
		if m.stored || m.data == "" {
			e = zt.Stored(m.name, []byte(m.data))
		}
		a.Entries = append(a.Entries, e)
	}
	if edit != nil {
		edit(a)
	}
	return a, a.Bytes()
}

// entry returns the archive's entry named name.
func entry(a *zt.Archive, name string) *zt.Entry {
	for _, e := range a.Entries {
		if e.Name == name {
			return e
		}
	}
	panic("no entry " + name)
}

// centralOf is where the entry's central directory header is.
func centralOf(a *zt.Archive, name string) int64 {
	for i, e := range a.Entries {
		if e.Name == name {
			return a.Central[i]
		}
	}
	panic("no entry " + name)
}

func offsetOf(a *zt.Archive, name string) int64 {
	for i, e := range a.Entries {
		if e.Name == name {
			return a.Offsets[i]
		}
	}
	panic("no entry " + name)
}

// TestCheckAmbiguousWheels: wheels that zip readers or metadata parsers
// would read differently. Each gets a finding naming the member (and the
// offset, for the zip structure); the zip-structure ones are also refused
// by internal/extract, which leaves nothing behind.
func TestCheckAmbiguousWheels(t *testing.T) {
	di := chkDistInfo + "/"
	init := "demo_pkg/__init__.py"
	tests := []struct {
		name   string
		build  func(t *testing.T) (*zt.Archive, []byte)
		check  string
		member string
		offset func(a *zt.Archive) int64 // nil: no offset in the message
		msg    string
		// extract: internal/extract must refuse the archive too
		extract error
	}{
		{
			name: "local header names another file",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) { entry(a, init).LocalName = zt.Ptr("demo_pkg/__init__.pyc") })
			},
			check: "zip", member: init, offset: func(a *zt.Archive) int64 { return offsetOf(a, init) },
			msg: `local header names the entry "demo_pkg/__init__.pyc"`, extract: extract.ErrAmbiguous,
		},
		{
			name: "data descriptor disagrees",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) {
					e := entry(a, init).WithDescriptor()
					e.Descriptor = zt.Descriptor(true, e.CRC32^1, uint32(len(e.Data)), uint32(e.USize))
				})
			},
			check: "zip", member: init, offset: func(a *zt.Archive) int64 {
				e := entry(a, init)
				return offsetOf(a, init) + 30 + int64(len(e.Name)+len(e.Data))
			},
			msg: "the data descriptor says CRC-32", extract: extract.ErrAmbiguous,
		},
		{
			name: "overlapping members",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) {
					// A second name for __init__.py's bytes.
					e := zt.Stored("demo_pkg/other.py", nil)
					*e = *entry(a, init)
					e.Name, e.NoLocal, e.Offset = "demo_pkg/other.py", true, zt.Ptr(int64(0))
					a.Entries = append(a.Entries, e)
				})
			},
			check: "zip", member: "demo_pkg/other.py", offset: func(*zt.Archive) int64 { return 0 },
			msg: "local header names the entry", extract: extract.ErrAmbiguous,
		},
		{
			name: "member hidden before the first",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) {
					h := zt.Stored("demo_pkg/hidden.py", []byte("import os\n"))
					h.NoCentral = true
					a.Entries = append([]*zt.Entry{h}, a.Entries...)
				})
			},
			check: "zip", offset: func(*zt.Archive) int64 { return 0 },
			msg: "bytes before the first entry belong to no entry", extract: extract.ErrAmbiguous,
		},
		{
			name: "prepended stub",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				a, _ := chkRaw(t, chkValid(), nil)
				stub := []byte("#!/bin/sh\nexit 0\n")
				for i, e := range a.Entries {
					e.Offset = zt.Ptr(a.Offsets[i])
				}
				a.Prefix, a.CDOffsetDelta = stub, -int64(len(stub))
				return a, a.Bytes()
			},
			check: "zip", offset: func(*zt.Archive) int64 { return 0 },
			msg: "data was prepended to the archive", extract: extract.ErrFormat,
		},
		{
			name: "bytes after the end record",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) { a.Trailing = []byte("PK\x05\x06 hidden") })
			},
			check: "zip", offset: func(a *zt.Archive) int64 { return a.EndOffset + 22 },
			msg: "follow the end of central directory record", extract: extract.ErrAmbiguous,
		},
		{
			name: "archive comment",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) { a.Comment = []byte("built by hand") })
			},
			check: "zip", msg: `the archive has a comment (13 bytes, "built by hand")`,
		},
		{
			name: "non-ASCII name without the UTF-8 flag",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				w := chkValid().add(chkMember{name: "demo_pkg/caf\u00e9.txt", data: "x"})
				return chkRaw(t, w, func(a *zt.Archive) { entry(a, "demo_pkg/caf\u00e9.txt").Flags = 0 })
			},
			check: "zip", member: "demo_pkg/caf\u00e9.txt", offset: func(a *zt.Archive) int64 { return centralOf(a, "demo_pkg/caf\u00e9.txt") },
			msg: `code page 437, giving "demo_pkg/caf├⌐.txt"`, extract: extract.ErrAmbiguous,
		},
		{
			name: "Unicode Path field renames a member",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid(), func(a *zt.Archive) {
					entry(a, init).CentralExtra = zt.UnicodePath(init, "demo_pkg/evil.py")
				})
			},
			check: "zip", member: init, offset: func(a *zt.Archive) int64 { return centralOf(a, init) },
			msg: "Unicode Path", extract: extract.ErrAmbiguous,
		},
		{
			name: "names equal under NFC",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				w := chkValid().add(chkMember{name: "demo_pkg/caf\u00e9.py", data: "1"}).add(chkMember{name: "demo_pkg/cafe\u0301.py", data: "2"})
				return chkRaw(t, w, nil)
			},
			check: "duplicate", member: "demo_pkg/cafe\u0301.py", msg: "\"demo_pkg/caf\u00e9.py\" under Unicode normalisation (NFC)", extract: extract.ErrDuplicate,
		},
		{
			name: "folders that differ in case",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid().add(chkMember{name: "Demo_Pkg/x.py", data: "1"}), nil)
			},
			check: "case-collision", member: "Demo_Pkg/", msg: `differs from "demo_pkg" only in case`, extract: extract.ErrDuplicate,
		},
		{
			name: "file and folder that differ in case",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid().add(chkMember{name: "demo_pkg/Core.py/x", data: "1"}), nil)
			},
			check: "case-collision", member: "demo_pkg/Core.py/", msg: `differs from "demo_pkg/core.py" only in case`, extract: extract.ErrDuplicate,
		},
		{
			name: "bare CR in METADATA",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				md := strings.Replace(chkMetadata, "Summary: A demonstration package", "Summary: A demonstration package\rRequires-Dist: evil", 1)
				return chkRaw(t, chkValid().set(di+"METADATA", md), nil)
			},
			check: "metadata", member: di + "METADATA", msg: "core metadata line 4: a carriage return",
		},
		{
			name: "bare CR in WHEEL",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				return chkRaw(t, chkValid().set(di+"WHEEL", strings.Replace(chkWheelFile, "Root-Is-Purelib: true", "Root-Is-Purelib: true\rTag: cp39-abi3-any", 1)), nil)
			},
			check: "wheel-file", member: di + "WHEEL", msg: "a carriage return",
		},
		{
			name: "bare CR in entry_points.txt",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				w := chkValid().add(chkMember{name: di + "entry_points.txt", data: "[console_scripts]\ndemo = demo_pkg:run\r[evil]\n"})
				return chkRaw(t, w, nil)
			},
			check: "entry-points", member: di + "entry_points.txt", msg: `line 2 (byte 37) has a carriage return ("\r") not followed by a line feed`,
		},
		{
			name: "bare CR in RECORD",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				w := chkValid().then(func(w *chkWheel) {
					r := chkMemberData(w, di+"RECORD")
					w.set(di+"RECORD", strings.Replace(r, "\n", "\r", 1))
				})
				return chkRaw(t, w, nil)
			},
			check: "record", member: di + "RECORD", msg: "line 1 (byte",
		},
		{
			name: "U+2028 in RECORD",
			build: func(t *testing.T) (*zt.Archive, []byte) {
				w := chkValid().add(chkMember{name: "demo_pkg/a\u2028b.py", data: "x"})
				return chkRaw(t, w, nil)
			},
			check: "record", member: di + "RECORD", msg: "the line separator U+2028",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, data := tt.build(t)
			rep, err := wheel.CheckReader(chkFile, bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatalf("CheckReader: %v", err)
			}
			chkInvariants(t, rep)
			var found *wheel.Finding
			for i, f := range rep.Findings {
				if f.Check == tt.check && f.Member == tt.member && strings.Contains(f.Msg, tt.msg) {
					found = &rep.Findings[i]
					break
				}
			}
			if found == nil {
				t.Fatalf("no %s finding for %q with %q; findings:\n%v", tt.check, tt.member, tt.msg, rep.Err())
			}
			if tt.offset != nil && !strings.HasPrefix(found.Msg, fmt.Sprintf("at offset %d: ", tt.offset(a))) {
				t.Errorf("finding %q does not start with the offset %d", found.Msg, tt.offset(a))
			}
			msg := rep.Err().Error()
			if !strings.HasPrefix(msg, "wheel "+chkFile+": ") || !strings.Contains(msg, tt.check) {
				t.Errorf("Err() = %q: want the wheel and the check named", msg)
			}
			t.Log(found)

			if tt.extract == nil {
				return
			}
			parent := t.TempDir()
			_, err = extract.Extract(context.Background(), chkFile, bytes.NewReader(data), filepath.Join(parent, "out"), extract.Options{})
			if !errors.Is(err, tt.extract) {
				t.Errorf("extract: err = %v, want %v", err, tt.extract)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("extract left %v", left)
			}
			var ee *extract.EntryError
			if errors.As(err, &ee) && (ee.Archive != chkFile || (ee.Reason == extract.ErrAmbiguous && tt.offset != nil && ee.Offset != tt.offset(a))) {
				t.Errorf("extract error names %q at offset %d", ee.Archive, ee.Offset)
			}
		})
	}
}

// TestMetadataBytesRefusesAmbiguousZip: MetadataBytes, which serves
// METADATA without a full check, still refuses a zip whose readers
// disagree, and names the file and the offset.
func TestMetadataBytesRefusesAmbiguousZip(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, chkFile)
	_, data := chkRaw(t, chkValid(), nil)
	if err := os.WriteFile(good, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if md, err := wheel.MetadataBytes(good); err != nil || string(md) != chkMetadata {
		t.Fatalf("MetadataBytes(valid) = %q, %v", md, err)
	}
	di := chkDistInfo + "/"
	a, data := chkRaw(t, chkValid(), func(a *zt.Archive) {
		// What a streaming reader would take for METADATA.
		entry(a, di+"METADATA").LocalName = zt.Ptr(di + "METADATA.orig")
	})
	bad := filepath.Join(dir, "bad", chkFile)
	os.Mkdir(filepath.Dir(bad), 0o755)
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := wheel.MetadataBytes(bad)
	want := fmt.Sprintf("at offset %d: the local header names the entry", offsetOf(a, di+"METADATA"))
	if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), want) {
		t.Fatalf("MetadataBytes(ambiguous) = %v, want it to name %s and say %q", err, bad, want)
	}
	if _, _, err := wheel.ReadMetadata(bad); err == nil {
		t.Fatalf("ReadMetadata accepted the ambiguous wheel")
	}
}

// TestParseMetadataBareCR: a bare carriage return is refused with its
// line; CRLF line ends are fine.
func TestParseMetadataBareCR(t *testing.T) {
	crlf := strings.ReplaceAll("Metadata-Version: 2.1\nName: x\nVersion: 1\n\nbody\n", "\n", "\r\n")
	if m, err := wheel.ParseMetadata([]byte(crlf)); err != nil || m.Name != "x" || m.Version != "1" {
		t.Fatalf("CRLF: %+v, %v", m, err)
	}
	for _, tt := range []struct {
		in   string
		line int
	}{
		{"Metadata-Version: 2.1\nName: x\rRequires-Dist: evil\n", 2},
		{"Name: x\r", 1},
		{"Name: x\n\nbody\rmore\n", 3},
		{"Name: x\r\r\n", 1},
	} {
		_, err := wheel.ParseMetadata([]byte(tt.in))
		var se *wheel.MetadataSyntaxError
		if !errors.As(err, &se) || se.Line != tt.line || !strings.Contains(se.Msg, "carriage return") {
			t.Errorf("ParseMetadata(%q) = %v, want a carriage return error on line %d", tt.in, err, tt.line)
		}
	}
}

// TestCheckRealWheelsHaveNoZipFinding complements TestCheckRealWheels:
// the zip structure audit finds nothing in wheels written by setuptools,
// wheel, flit and pip's own tooling.
func TestCheckRealWheelsHaveNoZipFinding(t *testing.T) {
	paths := chkRealWheels()
	more, _ := filepath.Glob("/root/.pyenv/versions/*/lib/python3*/test/*.whl")
	paths = append(paths, more...)
	if len(paths) == 0 {
		t.Skip("no wheels on this machine")
	}
	for _, p := range paths {
		rep, err := wheel.Check(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range rep.Findings {
			if slices.Contains([]string{"zip", "duplicate", "record", "entry-points"}, f.Check) {
				t.Errorf("%s: %s", p, f)
			}
		}
	}
}
