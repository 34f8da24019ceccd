package extract

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mholt/archives"
)

// extractBytes extracts data into a fresh parent/dest and returns dest.
func extractBytes(t *testing.T, data []byte, opts Options) (string, *Report, error) {
	t.Helper()
	parent := t.TempDir()
	dest := filepath.Join(parent, "out")
	rep, err := Extract(context.Background(), "test-archive", bytes.NewReader(data), dest, opts)
	if err != nil {
		if _, statErr := os.Lstat(dest); !errors.Is(statErr, fs.ErrNotExist) {
			t.Errorf("destination exists after error %v", err)
		}
		assertNothingLeft(t, parent)
		return dest, rep, err
	}
	if names := entriesOf(t, parent); len(names) != 1 || names[0] != "out" {
		t.Errorf("parent holds %q after success, want only out", names)
	}
	return dest, rep, nil
}

// validEntries is a well-formed archive exercising every kept entry type.
func validEntries() []ent {
	return []ent{
		dir("./"),
		{name: "pax-ignored", typ: tar.TypeXGlobalHeader}, // tar only
		file("README", "hello\n"),
		{name: "private.txt", typ: tar.TypeReg, mode: 0o600, body: "secret"},
		{name: "bin/tool", typ: tar.TypeReg, mode: 0o700, body: "#!/bin/sh\n"},
		{name: "bin/group-exec", typ: tar.TypeReg, mode: 0o610, body: "x"},
		file("deep/a/b/c.txt", "deep"),
		{name: "deep/", typ: tar.TypeDir, mode: 0o700}, // explicit after implicit
		file("empty", ""),
		symlink("bin/readme-link", "../README"),
		symlink("self-dir", "."),
		symlink("dangling", "nothing/here"),
		hardlink("bin/tool-copy", "bin/tool"),
	}
}

func validWant() map[string]string {
	return map[string]string{
		"README":          "file 0644 hello\n",
		"private.txt":     "file 0644 secret",
		"bin":             "dir 0755",
		"bin/tool":        "file 0755 #!/bin/sh\n",
		"bin/group-exec":  "file 0755 x",
		"deep":            "dir 0755",
		"deep/a":          "dir 0755",
		"deep/a/b":        "dir 0755",
		"deep/a/b/c.txt":  "file 0644 deep",
		"empty":           "file 0644 ",
		"bin/readme-link": "symlink -> ../README",
		"self-dir":        "symlink -> .",
		"dangling":        "symlink -> nothing/here",
		"bin/tool-copy":   "file 0755 #!/bin/sh\n",
	}
}

func TestRoundTrip(t *testing.T) {
	tarData := makeTar(t, validEntries()...)
	var zipEntries []ent
	for _, e := range validEntries() {
		if e.typ != tar.TypeXGlobalHeader && e.typ != tar.TypeLink {
			zipEntries = append(zipEntries, e)
		}
	}
	zipData := makeZip(t, zipEntries...)
	zipWant := validWant()
	delete(zipWant, "bin/tool-copy")

	tests := []struct {
		name   string
		data   []byte
		format string
		want   map[string]string
		stream bool
	}{
		{"tar", tarData, FormatTar, validWant(), false},
		{"tar.gz", gzipBytes(t, tarData), FormatTarGz, validWant(), false},
		{"tar.gz stream", gzipBytes(t, tarData), FormatTarGz, validWant(), true},
		{"tar.xz", xzBytes(t, tarData), FormatTarXz, validWant(), false},
		{"tar.bz2", compressWith(t, archives.Bz2{}, tarData), FormatTarBz2, validWant(), false},
		{"tar.zst", compressWith(t, archives.Zstd{}, tarData), FormatTarZst, validWant(), true},
		{"zip", zipData, FormatZip, zipWant, false},
		{"zip stream (spooled)", zipData, FormatZip, zipWant, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "out")
			var r io.Reader = bytes.NewReader(tt.data)
			if tt.stream {
				r = streamOnly{r}
			}
			rep, err := Extract(context.Background(), "x."+tt.format, r, dest, Options{AllowSymlinks: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := listTree(t, dest); !maps.Equal(got, tt.want) {
				t.Errorf("tree:\n got %q\nwant %q", got, tt.want)
			}
			if got := entriesOf(t, parent); len(got) != 1 {
				t.Errorf("parent holds %q, want only out", got)
			}
			if fi, err := os.Stat(dest); err != nil || fi.Mode().Perm() != 0o755 {
				t.Errorf("dest mode %v, %v; want 0755", fi.Mode(), err)
			}
			if rep.Format != tt.format {
				t.Errorf("Format = %q, want %q", rep.Format, tt.format)
			}
			wantFiles, wantLinks := 7, 1
			if tt.format == FormatZip {
				wantFiles, wantLinks = 6, 0
			}
			if rep.Files != wantFiles || rep.HardLinks != wantLinks || rep.Symlinks != 3 || rep.Dirs != 4 {
				t.Errorf("report %+v: want %d files, %d hard links, 3 symlinks, 4 dirs", rep, wantFiles, wantLinks)
			}
			if rep.ArchiveBytes <= 0 || rep.Bytes <= 0 {
				t.Errorf("report %+v: want ArchiveBytes and Bytes > 0", rep)
			}
		})
	}
}

func TestExtractFile(t *testing.T) {
	src := filepath.Join(t.TempDir(), "a.tar.gz")
	if err := os.WriteFile(src, gzipBytes(t, makeTar(t, file("pkg-1/x", "1"))), 0o644); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "out")
	rep, err := ExtractFile(context.Background(), src, dest, Options{StripComponents: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, dest); !maps.Equal(got, map[string]string{"x": "file 0644 1"}) {
		t.Errorf("tree %q", got)
	}
	if rep.Files != 1 {
		t.Errorf("report %+v", rep)
	}

	// Not a regular file.
	if _, err := ExtractFile(context.Background(), t.TempDir(), filepath.Join(t.TempDir(), "out"), Options{}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("directory as archive: err = %v", err)
	}
	// Missing file.
	if _, err := ExtractFile(context.Background(), src+".missing", filepath.Join(t.TempDir(), "out"), Options{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing archive: err = %v", err)
	}
}

func TestPipe(t *testing.T) {
	for _, data := range [][]byte{gzipBytes(t, makeTar(t, file("a", "A"))), makeZip(t, file("a", "A"))} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			pw.Write(data)
			pw.Close()
		}()
		dest := filepath.Join(t.TempDir(), "out")
		_, err = Extract(context.Background(), "pipe", pr, dest, Options{})
		pr.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := listTree(t, dest); !maps.Equal(got, map[string]string{"a": "file 0644 A"}) {
			t.Errorf("tree %q", got)
		}
	}
}

func TestSeekableAtOffset(t *testing.T) {
	data := append([]byte("junk"), makeZip(t, file("a", "A"))...)
	r := bytes.NewReader(data)
	if _, err := r.Seek(4, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "out")
	if _, err := Extract(context.Background(), "z", r, dest, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, dest); !maps.Equal(got, map[string]string{"a": "file 0644 A"}) {
		t.Errorf("tree %q", got)
	}
}

func TestStripComponents(t *testing.T) {
	entries := []ent{
		dir("./"),
		dir("./pkg-1.0/"),
		file("./pkg-1.0/a.txt", "a"),
		execFile("pkg-1.0/sub/b.txt", "b"),
		hardlink("pkg-1.0/h", "pkg-1.0/a.txt"),
		symlink("pkg-1.0/sub/l", "../a.txt"),
	}
	dest, _, err := extractBytes(t, gzipBytes(t, makeTar(t, entries...)), Options{StripComponents: 1, AllowSymlinks: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"a.txt":     "file 0644 a",
		"sub":       "dir 0755",
		"sub/b.txt": "file 0755 b",
		"h":         "file 0644 a",
		"sub/l":     "symlink -> ../a.txt",
	}
	if got := listTree(t, dest); !maps.Equal(got, want) {
		t.Errorf("tree:\n got %q\nwant %q", got, want)
	}

	dest, _, err = extractBytes(t, makeZip(t, file("a/b/c/d", "d")), Options{StripComponents: 2})
	if err != nil {
		t.Fatal(err)
	}
	if got := listTree(t, dest); !maps.Equal(got, map[string]string{"c": "dir 0755", "c/d": "file 0644 d"}) {
		t.Errorf("zip strip 2: tree %q", got)
	}
}

// unsafeCase is an archive that must be refused.
type unsafeCase struct {
	name    string
	entries []ent
	opts    Options
	want    error
	tarOnly bool   // zip cannot express it (hard links, some types)
	zipOnly bool   // tar writer cannot express it
	rawTar  []byte // the tar, when archive/tar cannot write it
}

func unsafeCases() []unsafeCase {
	withLinks := Options{AllowSymlinks: true}
	return []unsafeCase{
		// Names.
		{name: "dotdot", entries: []ent{file("../evil", "x")}, want: ErrTraversal},
		{name: "dotdot inside", entries: []ent{file("a/../../evil", "x")}, want: ErrTraversal},
		{name: "dotdot that cleans inside", entries: []ent{file("a/../b", "x")}, want: ErrTraversal},
		{name: "dotdot last", entries: []ent{dir("a/..")}, want: ErrTraversal},
		{name: "backslash dotdot", entries: []ent{file(`..\evil`, "x")}, want: ErrTraversal},
		{name: "absolute", entries: []ent{file("/tmp/evil", "x")}, want: ErrAbsolute},
		{name: "absolute dir", entries: []ent{dir("/tmp/")}, want: ErrAbsolute},
		{name: "backslash absolute", entries: []ent{file(`\evil`, "x")}, want: ErrAbsolute},
		{name: "UNC", entries: []ent{file(`\\host\share\evil`, "x")}, want: ErrAbsolute},
		{name: "drive letter", entries: []ent{file("C:/evil", "x")}, want: ErrAbsolute},
		{name: "drive letter backslash", entries: []ent{file(`c:\evil`, "x")}, want: ErrAbsolute},
		{name: "drive relative", entries: []ent{file("D:evil", "x")}, want: ErrAbsolute},
		{name: "backslash separator", entries: []ent{file(`dir\file`, "x")}, want: ErrInvalidName},
		{name: "empty name", entries: []ent{file("", "x")}, want: ErrInvalidName, zipOnly: true},
		{name: "NUL in name", entries: []ent{file("a\x00b", "x")}, want: ErrInvalidName, zipOnly: true},
		{name: "too long", entries: []ent{file(strings.Repeat("a/", 2100)+"f", "x")}, want: ErrInvalidName},
		{name: "element too long for the file system", entries: []ent{file(strings.Repeat("x", 300), "x")}, want: ErrInvalidName},
		{name: "file named root", entries: []ent{file(".", "x")}, want: ErrInvalidName},
		{name: "file with trailing slash", entries: []ent{file("a/", "x")}, want: ErrInvalidName, tarOnly: true, rawTar: rawTar("a/", tar.TypeReg, "x")},
		{name: "empty tar name", entries: []ent{file("", "x")}, want: ErrInvalidName, tarOnly: true, rawTar: rawTar("", tar.TypeReg, "x")},

		// Types.
		{name: "char device", entries: []ent{special("dev", tar.TypeChar)}, want: ErrSpecialFile},
		{name: "block device", entries: []ent{special("dev", tar.TypeBlock)}, want: ErrSpecialFile},
		{name: "fifo", entries: []ent{special("fifo", tar.TypeFifo)}, want: ErrSpecialFile},
		{name: "socket", entries: []ent{special("sock", 's')}, want: ErrSpecialFile, zipOnly: true},
		{name: "unknown tar type", entries: []ent{special("vol", 'V')}, want: ErrSpecialFile, tarOnly: true},

		// Symlinks.
		{name: "symlink not allowed", entries: []ent{symlink("l", "target")}, want: ErrSymlink},
		{name: "symlink up", entries: []ent{symlink("l", "../x")}, opts: withLinks, want: ErrLinkEscape},
		{name: "symlink up from subdir", entries: []ent{symlink("a/l", "../../x")}, opts: withLinks, want: ErrLinkEscape},
		{name: "symlink absolute", entries: []ent{symlink("l", "/etc/passwd")}, opts: withLinks, want: ErrLinkEscape},
		{name: "symlink drive", entries: []ent{symlink("l", `C:\Windows`)}, opts: withLinks, want: ErrLinkEscape},
		{name: "symlink backslash up", entries: []ent{symlink("l", `..\x`)}, opts: withLinks, want: ErrLinkEscape},
		{name: "symlink empty", entries: []ent{symlink("l", "")}, opts: withLinks, want: ErrBadLink},
		{name: "symlink via dot link", entries: []ent{symlink("a", "."), symlink("b", "a/..")}, opts: withLinks, want: ErrLinkEscape},
		{name: "symlink down then up", entries: []ent{symlink("b", "x/../y")}, opts: withLinks, want: ErrLinkEscape},
		{name: "write through symlink", entries: []ent{symlink("a", "."), file("a/x", "x")}, opts: withLinks, want: ErrLinkEscape},
		{name: "write through dir symlink", entries: []ent{dir("sub/"), symlink("link", "sub"), file("link/file", "x")}, opts: withLinks, want: ErrLinkEscape},
		{name: "dot link then traversal", entries: []ent{symlink("a", "."), file("a/../../x", "x")}, opts: withLinks, want: ErrTraversal},
		{name: "symlink over file", entries: []ent{file("a", "x"), symlink("a", "b")}, opts: withLinks, want: ErrDuplicate},
		{name: "file over symlink", entries: []ent{symlink("a", "b"), file("a", "x")}, opts: withLinks, want: ErrDuplicate},
		{name: "symlink root", entries: []ent{symlink(".", "x")}, opts: withLinks, want: ErrInvalidName},

		// Hard links (tar only).
		{name: "hard link up", entries: []ent{hardlink("h", "../x")}, want: ErrLinkEscape, tarOnly: true},
		{name: "hard link absolute", entries: []ent{hardlink("h", "/etc/passwd")}, want: ErrLinkEscape, tarOnly: true},
		{name: "hard link missing", entries: []ent{hardlink("h", "later"), file("later", "x")}, want: ErrBadLink, tarOnly: true},
		{name: "hard link to dir", entries: []ent{dir("d/"), hardlink("h", "d")}, want: ErrBadLink, tarOnly: true},
		{name: "hard link to symlink", entries: []ent{symlink("s", "x"), hardlink("h", "s")}, opts: withLinks, want: ErrBadLink, tarOnly: true},
		{name: "hard link into stripped", entries: []ent{file("p/a", "a"), hardlink("p/h", "top")}, opts: Options{StripComponents: 1}, want: ErrLinkEscape, tarOnly: true},
		{name: "hard link over its target", entries: []ent{file("a", "x"), hardlink("a", "a")}, want: ErrDuplicate, tarOnly: true},

		// Duplicates.
		{name: "same file twice", entries: []ent{file("a", "1"), file("a", "2")}, want: ErrDuplicate},
		{name: "same after cleaning", entries: []ent{file("a/b", "1"), file("./a//b", "2")}, want: ErrDuplicate},
		{name: "file then dir", entries: []ent{file("a", "1"), dir("a/")}, want: ErrDuplicate},
		{name: "dir then file", entries: []ent{dir("a/"), file("a", "1")}, want: ErrDuplicate},
		{name: "dir twice", entries: []ent{dir("a/"), dir("a/")}, want: ErrDuplicate},
		{name: "file then child", entries: []ent{file("a", "1"), file("a/b", "2")}, want: ErrDuplicate},
		{name: "child then file", entries: []ent{file("a/b", "1"), file("a", "2")}, want: ErrDuplicate},
		{name: "same after strip", entries: []ent{file("x/f", "1"), file("y/f", "2")}, opts: Options{StripComponents: 1}, want: ErrDuplicate},

		// Strip.
		{name: "file above strip", entries: []ent{file("top", "x")}, opts: Options{StripComponents: 1}, want: ErrStripComponents},
		{name: "symlink above strip", entries: []ent{symlink("top", "x")}, opts: Options{StripComponents: 2, AllowSymlinks: true}, want: ErrStripComponents},

		// Limits.
		{name: "too many entries", entries: []ent{file("a", ""), file("b", ""), file("c", ""), file("d", "")}, opts: Options{Limits: Limits{MaxEntries: 3}}, want: ErrTooMany},
		{name: "too many implicit dirs", entries: []ent{file("a/b/c", "")}, opts: Options{Limits: Limits{MaxEntries: 2}}, want: ErrTooMany},
		{name: "file too large", entries: []ent{file("big", "12345678901")}, opts: Options{Limits: Limits{MaxFileBytes: 10}}, want: ErrTooLarge},
		{name: "total too large", entries: []ent{file("a", "1234567890"), file("b", "123456")}, opts: Options{Limits: Limits{MaxTotalBytes: 15}}, want: ErrTooLarge},
		{name: "hard link copies count", entries: []ent{file("a", "1234567890"), hardlink("b", "a")}, opts: Options{Limits: Limits{MaxTotalBytes: 15}}, want: ErrTooLarge, tarOnly: true},
	}
}

func TestUnsafe(t *testing.T) {
	for _, tt := range unsafeCases() {
		for _, format := range []string{FormatTarGz, FormatZip} {
			if (format == FormatZip && tt.tarOnly) || (format != FormatZip && tt.zipOnly) {
				continue
			}
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				var data []byte
				switch {
				case format == FormatZip:
					data = makeZip(t, tt.entries...)
				case tt.rawTar != nil:
					data = gzipBytes(t, tt.rawTar)
				default:
					data = gzipBytes(t, makeTar(t, tt.entries...))
				}
				_, rep, err := extractBytes(t, data, tt.opts)
				if !errors.Is(err, tt.want) {
					t.Fatalf("err = %v, want %v", err, tt.want)
				}
				var ee *EntryError
				if !errors.As(err, &ee) {
					t.Fatalf("err %T is not an *EntryError", err)
				}
				// A zip with too many entries is refused on its end
				// record's count, before any entry is read.
				wholeArchive := format == FormatZip && tt.want == ErrTooMany
				if ee.Archive != "test-archive" || ee.Entry == "" && tt.entries[len(tt.entries)-1].name != "" && !wholeArchive {
					t.Errorf("EntryError names archive %q, entry %q", ee.Archive, ee.Entry)
				}
				msg := err.Error()
				if !strings.Contains(msg, "test-archive") || !strings.Contains(msg, "; ") {
					t.Errorf("message %q lacks the archive name or advice", msg)
				}
				if rep == nil {
					t.Errorf("no report on error")
				}
			})
		}
	}
}

func TestErrorMessages(t *testing.T) {
	_, _, err := extractBytes(t, makeTar(t, file("../evil", "x")), Options{})
	const prefix = `extract test-archive: entry "../evil": path traversal`
	if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, "obtain it again from its source") {
		t.Errorf("message %q: want it to start with %q and say what to do", msg, prefix)
	}
	// A limit's advice names the setting the caller gives for it, and
	// says the limit is fixed when it gives none: never a setting that
	// does not exist.
	settings := Settings{Entries: "ENTRIES-SETTING", FileBytes: "FILE-SETTING", TotalBytes: "TOTAL-SETTING", Ratio: "RATIO-SETTING"}
	for _, tc := range []struct {
		name    string
		archive []byte
		limits  Limits
		setting string
	}{
		{"file", makeTar(t, file("big", "12345678901")), Limits{MaxFileBytes: 10}, settings.FileBytes},
		{"total", makeTar(t, file("a", "1234567890"), file("b", "1")), Limits{MaxTotalBytes: 10}, settings.TotalBytes},
		{"entries", makeTar(t, file("a", ""), file("b", "")), Limits{MaxEntries: 1}, settings.Entries},
		{"entries, zip", makeZip(t, file("a", ""), file("b", "")), Limits{MaxEntries: 1}, settings.Entries},
		{"ratio", gzipBytes(t, makeTar(t, file("zeros", string(make([]byte, 1<<20))))), Limits{MaxRatio: 2, RatioAllowance: -1}, settings.Ratio},
	} {
		_, _, err = extractBytes(t, tc.archive, Options{Limits: tc.limits, Settings: settings})
		if msg := err.Error(); !strings.Contains(msg, "raise "+tc.setting+" if its") {
			t.Errorf("%s: message %q does not name %s", tc.name, msg, tc.setting)
		}
		_, _, err = extractBytes(t, tc.archive, Options{Limits: tc.limits})
		if msg := err.Error(); !strings.Contains(msg, "is fixed for this kind of archive") || strings.Contains(msg, "raise") {
			t.Errorf("%s, no setting: message %q names something to raise", tc.name, msg)
		}
	}
	// Control characters in names are quoted, not printed raw.
	_, _, err = extractBytes(t, makeTar(t, file("../\x1b[31mred\n", "x")), Options{})
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\n") {
		t.Errorf("message %q contains raw control characters", msg)
	}
}

func TestFormats(t *testing.T) {
	tarData := makeTar(t, file("a", "hello"))
	gz := gzipBytes(t, tarData)
	badCRC := bytes.Clone(gz)
	badCRC[len(badCRC)-8] ^= 0xff
	tests := []struct {
		name string
		data []byte
		want error
	}{
		{"empty input", nil, ErrFormat},
		{"text", []byte("just some text, not an archive at all"), ErrFormat},
		{"short", []byte("x"), ErrFormat},
		{"gzip of text", gzipBytes(t, bytes.Repeat([]byte("text "), 200)), ErrFormat},
		{"truncated tar.gz", gz[:len(gz)/2], ErrCorrupt},
		{"tar.gz bad crc", badCRC, ErrCorrupt},
		{"truncated tar", tarData[:700], ErrCorrupt},
		{"tar truncated at entry boundary", tarData[:1024], ErrCorrupt},
		{"tar.gz truncated at entry boundary", gzipBytes(t, tarData[:1024]), ErrCorrupt},
		{"tar without second zero block", tarData[:1536], ErrCorrupt},
		{"trailing data after tar", append(bytes.Clone(tarData), []byte("hidden entry")...), ErrCorrupt},
		{"trailing data after tar.gz", gzipBytes(t, append(bytes.Clone(tarData), makeTar(t, file("hidden", "x"))...)), ErrCorrupt},
		{"truncated zip", makeZip(t, file("a", "x"))[:30], ErrCorrupt},
		{"7z", []byte("7z\xbc\xaf\x27\x1c\x00\x04" + strings.Repeat("\x00", 600)), ErrFormat},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := extractBytes(t, tt.data, Options{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}

	// Zero padding after the end is fine (tar pads to its record size).
	padded := append(bytes.Clone(tarData), make([]byte, 20<<10)...)
	if _, _, err := extractBytes(t, gzipBytes(t, padded), Options{}); err != nil {
		t.Errorf("padded tar: %v", err)
	}
	// An empty tar is an empty directory.
	dest, _, err := extractBytes(t, makeTar(t), Options{})
	if err != nil {
		t.Fatalf("empty tar: %v", err)
	}
	if got := listTree(t, dest); len(got) != 0 {
		t.Errorf("empty tar gave %q", got)
	}
}

func TestDestination(t *testing.T) {
	data := makeTar(t, file("a", "x"))
	parent := t.TempDir()
	dest := filepath.Join(parent, "out")
	if err := os.Mkdir(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Extract(context.Background(), "t", bytes.NewReader(data), dest, Options{})
	if !errors.Is(err, fs.ErrExist) {
		t.Errorf("existing dest: err = %v, want fs.ErrExist", err)
	}
	if names := entriesOf(t, parent); len(names) != 1 {
		t.Errorf("parent holds %q", names)
	}
	if names := entriesOf(t, dest); len(names) != 0 {
		t.Errorf("existing dest was written to: %q", names)
	}

	// A dangling symlink counts as existing.
	link := filepath.Join(parent, "link")
	if err := os.Symlink("nowhere", link); err != nil {
		t.Fatal(err)
	}
	if _, err := Extract(context.Background(), "t", bytes.NewReader(data), link, Options{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("dangling symlink dest: err = %v, want fs.ErrExist", err)
	}

	if _, err := Extract(context.Background(), "t", bytes.NewReader(data), filepath.Join(parent, "missing", "out"), Options{}); err == nil {
		t.Errorf("missing parent: no error")
	}
	if _, err := Extract(context.Background(), "t", bytes.NewReader(data), "", Options{}); err == nil {
		t.Errorf("empty dest: no error")
	}
	if _, err := Extract(context.Background(), "t", bytes.NewReader(data), filepath.Join(parent, "neg"), Options{StripComponents: -1}); err == nil {
		t.Errorf("negative StripComponents: no error")
	}

	// renameNoReplace refuses to replace, even an empty directory.
	src := filepath.Join(parent, "src")
	if err := os.Mkdir(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := renameNoReplace(src, dest); !errors.Is(err, fs.ErrExist) {
		t.Errorf("renameNoReplace onto an empty directory: err = %v, want fs.ErrExist", err)
	}
}

// zeroTarGz builds, streaming, a tar.gz holding one file of size zero bytes.
func zeroTarGz(t *testing.T, size int64) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := archives.Gz{CompressionLevel: 9}.OpenWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "zeros", Typeflag: tar.TypeReg, Mode: 0o644, Size: size}); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1<<20)
	for left := size; left > 0; {
		n := min(left, int64(len(chunk)))
		if _, err := tw.Write(chunk[:n]); err != nil {
			t.Fatal(err)
		}
		left -= n
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestBomb(t *testing.T) {
	const size = 200 << 20
	bomb := zeroTarGz(t, size)
	t.Logf("gzip bomb: %d bytes expand to %d (ratio %.0f)", len(bomb), size, float64(size)/float64(len(bomb)))

	tests := []struct {
		name   string
		limits Limits
		stream bool
	}{
		{"defaults", Limits{}, false},
		{"defaults stream", Limits{}, true},
		{"tight", Limits{MaxRatio: 20, RatioAllowance: 1 << 20}, false},
		{"no allowance", Limits{MaxRatio: 50, RatioAllowance: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			var r io.Reader = bytes.NewReader(bomb)
			if tt.stream {
				r = streamOnly{r}
			}
			rep, err := Extract(context.Background(), "bomb.tar.gz", r, filepath.Join(parent, "out"), Options{Limits: tt.limits})
			if !errors.Is(err, ErrBomb) {
				t.Fatalf("err = %v, want ErrBomb", err)
			}
			if !strings.Contains(err.Error(), "compression ratio is fixed") {
				t.Errorf("message %q does not say the ratio limit is fixed", err)
			}
			lim, _ := Options{Limits: tt.limits}.resolve()
			bound := lim.ratio*float64(rep.ArchiveBytes) + float64(lim.allowance)
			if float64(rep.Bytes) > bound || rep.Bytes >= size {
				t.Errorf("wrote %d bytes before refusing; limit %.0f", rep.Bytes, bound)
			}
			t.Logf("refused after writing %d bytes (%d archive bytes read)", rep.Bytes, rep.ArchiveBytes)
			assertNothingLeft(t, parent)
		})
	}

	// A hard link bomb: one file copied many times, a few bytes each.
	entries := []ent{file("a", strings.Repeat("x", 1<<20))}
	for i := range 200 {
		entries = append(entries, hardlink("h/"+strings.Repeat("l", i+1), "a"))
	}
	_, _, err := extractBytes(t, gzipBytes(t, makeTar(t, entries...)), Options{Limits: Limits{RatioAllowance: 16 << 20}})
	if !errors.Is(err, ErrBomb) {
		t.Errorf("hard link bomb: err = %v, want ErrBomb", err)
	}

	// A zip bomb: the ratio uses the zip's size.
	zipBomb := makeZip(t, file("zeros", string(make([]byte, 32<<20))))
	_, _, err = extractBytes(t, zipBomb, Options{Limits: Limits{MaxRatio: 10, RatioAllowance: 1 << 20}})
	if !errors.Is(err, ErrBomb) {
		t.Errorf("zip bomb: err = %v, want ErrBomb", err)
	}
	// Unlimited ratio lets it through.
	if _, _, err := extractBytes(t, zipBomb, Options{Limits: Limits{MaxRatio: -1}}); err != nil {
		t.Errorf("zip bomb with no ratio limit: %v", err)
	}
}

// cancelAfter cancels a context once n bytes have been read through it.
type cancelAfter struct {
	r      io.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n -= n
	if c.n <= 0 {
		c.cancel()
	}
	return n, err
}

// cancelAfterAt is cancelAfter for random access (the zip path).
type cancelAfterAt struct {
	*bytes.Reader
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfterAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.Reader.ReadAt(p, off)
	c.n -= n
	if c.n <= 0 {
		c.cancel()
	}
	return n, err
}

func TestCancel(t *testing.T) {
	var entries []ent
	body := strings.Repeat("0123456789abcdef", 4096) // 64 KiB
	for i := range 64 {
		entries = append(entries, file("f/"+strings.Repeat("x", i+1), body))
	}
	data := makeTar(t, entries...)

	t.Run("before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		parent := t.TempDir()
		_, err := Extract(ctx, "t", bytes.NewReader(data), filepath.Join(parent, "out"), Options{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		assertNothingLeft(t, parent)
	})
	for _, format := range []string{FormatTar, FormatTarGz, FormatZip} {
		t.Run("during "+format, func(t *testing.T) {
			d := data
			switch format {
			case FormatTarGz:
				d = gzipBytes(t, data)
			case FormatZip:
				d = makeZip(t, entries...)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			parent := t.TempDir()
			r := &cancelAfter{r: bytes.NewReader(d), n: len(d) / 2, cancel: cancel}
			_, err := Extract(ctx, "t", r, filepath.Join(parent, "out"), Options{})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			assertNothingLeft(t, parent)
		})
	}
	t.Run("during zip walk", func(t *testing.T) {
		d := makeZip(t, entries...)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		parent := t.TempDir()
		r := &cancelAfterAt{Reader: bytes.NewReader(d), n: len(d) / 2, cancel: cancel}
		_, err := Extract(ctx, "t", r, filepath.Join(parent, "out"), Options{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		assertNothingLeft(t, parent)
	})
}

func TestCheckSymlinkTarget(t *testing.T) {
	tests := []struct {
		link, target string
		want         error
	}{
		{"l", "x", nil},
		{"l", "./x", nil},
		{"l", ".", nil},
		{"a/l", "..", nil},
		{"a/l", "../x/y", nil},
		{"a/b/l", "../../x", nil},
		{"a/b/l", ".././../x", nil},
		{"l", "..", ErrLinkEscape},
		{"a/b/l", "../../../x", ErrLinkEscape},
		{"a/l", "x/../..", ErrLinkEscape},
		{"a/l", "x/..", ErrLinkEscape},
		{"l", "/x", ErrLinkEscape},
		{"l", "c:x", ErrLinkEscape},
		{"l", `x\y`, ErrBadLink},
		{"l", "", ErrBadLink},
		{"l", "a\x00", ErrBadLink},
	}
	for _, tt := range tests {
		v := checkSymlinkTarget(tt.link, tt.target)
		switch {
		case tt.want == nil && v != nil:
			t.Errorf("%s -> %q: %v, want ok", tt.link, tt.target, v)
		case tt.want != nil && (v == nil || v.reason != tt.want):
			t.Errorf("%s -> %q: %v, want %v", tt.link, tt.target, v, tt.want)
		}
	}
}

func TestIdentifyIsByContent(t *testing.T) {
	tarData := makeTar(t, file("a", "x"))
	zipData := makeZip(t, file("a", "x"))
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"x.zip", tarData, FormatTar},
		{"x.tar.gz", zipData, FormatZip},
		{"x.tar.xz", gzipBytes(t, tarData), FormatTarGz},
		{"x.br", tarData, FormatTar},
	}
	for _, tt := range tests {
		// archives.Identify's answer can vary with map iteration order;
		// ours must not, and must ignore the misleading name.
		for range 5 {
			dest := filepath.Join(t.TempDir(), "out")
			rep, err := Extract(context.Background(), tt.name, bytes.NewReader(tt.data), dest, Options{})
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if rep.Format != tt.want {
				t.Fatalf("%s: format %s, want %s", tt.name, rep.Format, tt.want)
			}
		}
	}
}

// TestAdmit checks the limits applied while data streams, which declared
// sizes normally anticipate.
func TestAdmit(t *testing.T) {
	lim, err := Options{Limits: Limits{MaxFileBytes: 100, MaxTotalBytes: 150, MaxRatio: 2, RatioAllowance: 10}}.resolve()
	if err != nil {
		t.Fatal(err)
	}
	compressed := int64(1000)
	s := &state{lim: lim, rep: &Report{}, compressed: func() int64 { return compressed },
		settings: Settings{FileBytes: "FILE-SETTING", TotalBytes: "TOTAL-SETTING", Ratio: "RATIO-SETTING"}}
	for _, a := range []struct{ advice, setting string }{{s.adviceFile(), "FILE-SETTING"}, {s.adviceTotal(), "TOTAL-SETTING"}, {s.adviceRatio(), "RATIO-SETTING"}} {
		if !strings.Contains(a.advice, "raise "+a.setting) {
			t.Errorf("advice %q does not name %s", a.advice, a.setting)
		}
	}
	check := func(written, n int64, want error, advice string) {
		t.Helper()
		v := s.admit(written, n)
		switch {
		case want == nil && v != nil:
			t.Errorf("admit(%d, %d) with %d written in all: %v", written, n, s.rep.Bytes, v)
		case want != nil && (v == nil || v.reason != want || v.advice != advice):
			t.Errorf("admit(%d, %d) with %d written in all: %v, want %v (%s)", written, n, s.rep.Bytes, v, want, advice)
		}
	}
	check(0, 100, nil, "")
	check(60, 41, ErrTooLarge, s.adviceFile())
	s.rep.Bytes = 100
	check(0, 50, nil, "")
	check(0, 51, ErrTooLarge, s.adviceTotal())
	compressed = 10
	s.rep.Bytes = 0
	check(0, 30, nil, "") // 2×10 + 10
	check(0, 31, ErrBomb, s.adviceRatio())

	// Negative limits mean none; zero means the defaults.
	lim, _ = Options{Limits: Limits{MaxFileBytes: -1, MaxTotalBytes: -1, MaxRatio: -1, MaxEntries: -1}}.resolve()
	s = &state{lim: lim, rep: &Report{}, compressed: func() int64 { return 0 }}
	if v := s.admit(1<<50, 1<<50); v != nil {
		t.Errorf("unlimited: %v", v)
	}
	if lim, _ := (Options{}).resolve(); lim != (limits{DefaultMaxEntries, DefaultMaxFileBytes, DefaultMaxTotalBytes, DefaultMaxRatio, DefaultRatioAllowance}) {
		t.Errorf("defaults: %+v", lim)
	}
	if _, err := (Options{Limits: Limits{MaxRatio: math.NaN()}}).resolve(); err == nil {
		t.Errorf("NaN ratio accepted")
	}
}
