package tarball

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/extract"
)

const epoch = 1793491200 // 2026-11-01T00:00:00Z

// sample is a small tree with nested folders, an executable, an explicit
// empty folder, an empty file and a file read from disk.
func sample(t testing.TB) []Entry {
	dir := t.TempDir()
	disk := filepath.Join(dir, "tool")
	if err := os.WriteFile(disk, []byte("#!/bin/sh\necho hi\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	return []Entry{
		{Path: "wheels/b-1.0-py3-none-any.whl", Data: []byte("wheel b")},
		{Path: "INSTALL.md", Data: []byte("# Install\n")},
		{Path: "install.sh", File: disk, Mode: 0o700},
		{Path: "wheels/a-1.0-py3-none-any.whl", Data: []byte("wheel a")},
		{Path: "dependencies", Mode: fs.ModeDir},
		{Path: "licenses/deep/er/LICENSE", Data: []byte("MIT\n")},
		{Path: "empty.txt"},
	}
}

func write(t testing.TB, entries []Entry, o Options) ([]byte, string, int64) {
	t.Helper()
	var buf bytes.Buffer
	sha, size, err := Write(context.Background(), &buf, entries, o)
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), sha, size
}

type member struct {
	hdr  *tar.Header
	data []byte
}

func read(t testing.TB, archive []byte) (*gzip.Reader, []member) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	tr := tar.NewReader(zr)
	var out []member
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, member{h, data})
	}
	if rest, _ := io.ReadAll(zr); len(rest) != 0 {
		t.Errorf("%d bytes after the tar end", len(rest))
	}
	return zr, out
}

func TestRoundTrip(t *testing.T) {
	o := Options{Root: "vexl-0.3.0-linux-x86_64", MTime: epoch}
	archive, sha, size := write(t, sample(t), o)
	if sum := sha256.Sum256(archive); hex.EncodeToString(sum[:]) != sha || int64(len(archive)) != size {
		t.Errorf("returned %s %d, archive is %x %d", sha, size, sum, len(archive))
	}
	zr, members := read(t, archive)

	// gzip header: no name, comment or extra; mtime 0; OS unknown.
	if zr.Name != "" || zr.Comment != "" || zr.Extra != nil || !zr.ModTime.IsZero() || zr.OS != 255 {
		t.Errorf("gzip header %+v", zr.Header)
	}
	if !bytes.Equal(archive[4:10], []byte{0, 0, 0, 0, 0, 255}) || archive[3] != 0 {
		t.Errorf("gzip header bytes % x", archive[:10])
	}

	want := []struct {
		name string
		typ  byte
		mode int64
		data string
	}{
		{"vexl-0.3.0-linux-x86_64/", tar.TypeDir, 0o755, ""},
		{"vexl-0.3.0-linux-x86_64/INSTALL.md", tar.TypeReg, 0o644, "# Install\n"},
		{"vexl-0.3.0-linux-x86_64/dependencies/", tar.TypeDir, 0o755, ""},
		{"vexl-0.3.0-linux-x86_64/empty.txt", tar.TypeReg, 0o644, ""},
		{"vexl-0.3.0-linux-x86_64/install.sh", tar.TypeReg, 0o755, "#!/bin/sh\necho hi\n"},
		{"vexl-0.3.0-linux-x86_64/licenses/", tar.TypeDir, 0o755, ""},
		{"vexl-0.3.0-linux-x86_64/licenses/deep/", tar.TypeDir, 0o755, ""},
		{"vexl-0.3.0-linux-x86_64/licenses/deep/er/", tar.TypeDir, 0o755, ""},
		{"vexl-0.3.0-linux-x86_64/licenses/deep/er/LICENSE", tar.TypeReg, 0o644, "MIT\n"},
		{"vexl-0.3.0-linux-x86_64/wheels/", tar.TypeDir, 0o755, ""},
		{"vexl-0.3.0-linux-x86_64/wheels/a-1.0-py3-none-any.whl", tar.TypeReg, 0o644, "wheel a"},
		{"vexl-0.3.0-linux-x86_64/wheels/b-1.0-py3-none-any.whl", tar.TypeReg, 0o644, "wheel b"},
	}
	if len(members) != len(want) {
		for _, m := range members {
			t.Log(m.hdr.Name)
		}
		t.Fatalf("%d members, want %d", len(members), len(want))
	}
	for i, w := range want {
		h := members[i].hdr
		if h.Name != w.name || h.Typeflag != w.typ || h.Mode != w.mode || string(members[i].data) != w.data {
			t.Errorf("member %d: %q type %c mode %o data %q; want %q %c %o %q", i, h.Name, h.Typeflag, h.Mode, members[i].data, w.name, w.typ, w.mode, w.data)
		}
		checkFixedFields(t, h, tar.FormatUSTAR)
	}
}

// checkFixedFields checks the header fields that are the same for every
// member.
func checkFixedFields(t *testing.T, h *tar.Header, format tar.Format) {
	t.Helper()
	if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
		t.Errorf("%s: owner %d/%d %q/%q", h.Name, h.Uid, h.Gid, h.Uname, h.Gname)
	}
	if h.ModTime.Unix() != epoch || h.ModTime.Nanosecond() != 0 {
		t.Errorf("%s: mtime %v", h.Name, h.ModTime)
	}
	if !h.AccessTime.IsZero() || !h.ChangeTime.IsZero() {
		t.Errorf("%s: atime %v ctime %v", h.Name, h.AccessTime, h.ChangeTime)
	}
	if h.Linkname != "" || h.Devmajor != 0 || h.Devminor != 0 {
		t.Errorf("%s: link %q dev %d,%d", h.Name, h.Linkname, h.Devmajor, h.Devminor)
	}
	if h.Format != format {
		t.Errorf("%s: format %v, want %v", h.Name, h.Format, format)
	}
	for k := range h.PAXRecords {
		if k != "path" {
			t.Errorf("%s: PAX record %q", h.Name, k)
		}
	}
}

func TestLongAndUnicodeNames(t *testing.T) {
	long := strings.Repeat("d", 99) + "/" + strings.Repeat("f", 99)     // splits into USTAR prefix + name
	longer := strings.Repeat("x", 120) + "/" + strings.Repeat("y", 150) // does not split
	deep := strings.Repeat("abcdefghi/", 40) + "leaf"                   // > 256 bytes
	unicode := "licenses/Ünïcödé-日本.txt"                                // non-ASCII
	entries := []Entry{{Path: long}, {Path: longer}, {Path: deep}, {Path: unicode, Data: []byte("ü")}}
	archive, _, _ := write(t, entries, Options{Root: "r", MTime: epoch})
	_, members := read(t, archive)
	got := map[string]*tar.Header{}
	for _, m := range members {
		got[m.hdr.Name] = m.hdr
	}
	for _, tc := range []struct {
		name   string
		format tar.Format
	}{
		{"r/" + long, tar.FormatUSTAR},
		{"r/" + longer, tar.FormatPAX},
		{"r/" + deep, tar.FormatPAX},
		{"r/" + unicode, tar.FormatPAX},
		{"r/" + strings.Repeat("abcdefghi/", 30), tar.FormatPAX}, // a long directory
	} {
		h := got[tc.name]
		if h == nil {
			t.Errorf("%s missing", tc.name)
			continue
		}
		checkFixedFields(t, h, tc.format)
		if tc.format == tar.FormatPAX && h.PAXRecords["path"] != tc.name {
			t.Errorf("%s: PAX records %v", tc.name, h.PAXRecords)
		}
	}
	// Sorted in byte order of the stored names.
	for i := 1; i < len(members); i++ {
		if members[i-1].hdr.Name >= members[i].hdr.Name {
			t.Errorf("%q before %q", members[i-1].hdr.Name, members[i].hdr.Name)
		}
	}
}

func TestOrderIsByteOrderOfStoredNames(t *testing.T) {
	// "a-b" sorts before "a/" ('-' < '/'), and "a/" before its contents.
	entries := []Entry{{Path: "a/x"}, {Path: "a-b"}, {Path: "a0"}, {Path: "A1"}, {Path: "a/y/z"}}
	archive, _, _ := write(t, entries, Options{Root: "r"})
	_, members := read(t, archive)
	var names []string
	for _, m := range members {
		names = append(names, m.hdr.Name)
	}
	want := "r/ r/A1 r/a-b r/a/ r/a/x r/a/y/ r/a/y/z r/a0"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("order\n got %s\nwant %s", got, want)
	}
}

func TestGNUTarReadsIt(t *testing.T) {
	tarBin, err := exec.LookPath("tar")
	if err != nil {
		t.Skip("no tar")
	}
	dir := t.TempDir()
	archive := filepath.Join(dir, "b.tar.gz")
	entries := append(sample(t), Entry{Path: strings.Repeat("long/", 60) + "name.txt", Data: []byte("long")})
	if _, _, err := WriteFile(context.Background(), archive, entries, Options{Root: "bundle", MTime: epoch}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tarBin, "-tvzf", archive)
	cmd.Env = append(os.Environ(), "TZ=UTC", "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("tar -tvzf: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 13+60 {
		t.Errorf("tar lists %d entries:\n%s", len(lines), out)
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) < 6 || f[1] != "0/0" || f[3] != "2026-11-01" || f[4] != "00:00" {
			t.Errorf("tar -tv line %q", l)
		}
		switch {
		case strings.HasSuffix(f[5], "/"):
			if f[0] != "drwxr-xr-x" {
				t.Errorf("directory line %q", l)
			}
		case strings.HasSuffix(f[5], "install.sh"):
			if f[0] != "-rwxr-xr-x" {
				t.Errorf("executable line %q", l)
			}
		default:
			if f[0] != "-rw-r--r--" {
				t.Errorf("file line %q", l)
			}
		}
	}
	if !strings.HasPrefix(lines[0], "drwxr-xr-x 0/0") || !strings.HasSuffix(lines[0], " bundle/") {
		t.Errorf("first entry %q", lines[0])
	}

	x := filepath.Join(dir, "x")
	os.Mkdir(x, 0o755)
	cmd = exec.Command(tarBin, "-xzf", archive, "-C", x)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tar -xzf: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(x, "bundle", "install.sh"))
	st, _ := os.Stat(filepath.Join(x, "bundle", "install.sh"))
	if err != nil || string(b) != "#!/bin/sh\necho hi\n" || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("extracted install.sh: %q %v %v", b, st.Mode(), err)
	}
	if st, err := os.Stat(filepath.Join(x, "bundle", "dependencies")); err != nil || !st.IsDir() {
		t.Errorf("empty folder not extracted: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(x, "bundle", strings.Repeat("long/", 60)+"name.txt")); err != nil || string(b) != "long" {
		t.Errorf("long name: %q %v", b, err)
	}
	if out, err := exec.Command("gzip", "-t", archive).CombinedOutput(); err != nil {
		t.Errorf("gzip -t: %v %s", err, out)
	}
}

func TestMkreleaseExtractsIt(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "b.tar.gz")
	if _, _, err := WriteFile(context.Background(), archive, sample(t), Options{Root: "bundle", MTime: epoch}); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "out")
	if _, err := extract.ExtractFile(context.Background(), archive, dest, extract.Options{}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dest, "bundle", "wheels", "a-1.0-py3-none-any.whl")); err != nil || string(b) != "wheel a" {
		t.Errorf("%q %v", b, err)
	}
}

func TestDeterministic(t *testing.T) {
	base := sample(t)
	o := Options{Root: "vexl", MTime: epoch}
	first, sha1, _ := write(t, base, o)
	again, sha2, _ := write(t, base, o)
	if !bytes.Equal(first, again) || sha1 != sha2 {
		t.Fatal("two writes differ")
	}

	// Any input order.
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5 {
		shuffled := append([]Entry(nil), base...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got, _, _ := write(t, shuffled, o); !bytes.Equal(got, first) {
			t.Fatal("order of entries changes the archive")
		}
	}

	// Mode noise, and the file on disk with other permissions and times.
	noisy := append([]Entry(nil), base...)
	for i := range noisy {
		switch {
		case noisy[i].Mode.IsDir():
			noisy[i].Mode = fs.ModeDir | 0o700
		case noisy[i].Mode&0o111 != 0:
			noisy[i].Mode = 0o4775 | fs.ModeSetuid | fs.ModeSticky
		default:
			noisy[i].Mode = 0o600
		}
		if noisy[i].File != "" {
			os.Chmod(noisy[i].File, 0o777)
			os.Chtimes(noisy[i].File, time.Unix(1, 0), time.Unix(2, 0))
		}
	}
	old := setUmask(0o077)
	got, _, _ := write(t, noisy, o)
	setUmask(old)
	if !bytes.Equal(got, first) {
		t.Error("mode noise or file metadata changes the archive")
	}

	// A negative epoch is clamped to 0.
	a, _, _ := write(t, base, Options{Root: "vexl", MTime: -5})
	b, _, _ := write(t, base, Options{Root: "vexl", MTime: 0})
	if !bytes.Equal(a, b) {
		t.Error("negative MTime not clamped to 0")
	}
}

// TestConcurrencyDoesNotChangeBytes compresses several pgzip blocks of
// mixed content with 1, 2 and 4 blocks at once and under GOMAXPROCS 1.
func TestConcurrencyDoesNotChangeBytes(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	random := make([]byte, 3*BlockSize+12345)
	for i := range random {
		random[i] = byte(rng.Uint32())
	}
	var text bytes.Buffer
	for text.Len() < 5*BlockSize {
		fmt.Fprintf(&text, "line %d of a compressible file, value %d\n", text.Len(), rng.IntN(1000))
	}
	entries := []Entry{
		{Path: "random.bin", Data: random},
		{Path: "text.txt", Data: text.Bytes()},
		{Path: "small", Data: []byte("x")},
	}
	var want []byte
	for _, c := range []int{1, 4, 2, 0} {
		got, _, _ := write(t, entries, Options{Root: "r", MTime: epoch, Concurrency: c})
		if want == nil {
			want = got
			if len(got) < 3*BlockSize {
				t.Fatalf("archive of %d bytes: too small to span several blocks", len(got))
			}
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("concurrency %d changes the bytes", c)
		}
	}
	prev := runtime.GOMAXPROCS(1)
	got, _, _ := write(t, entries, Options{Root: "r", MTime: epoch})
	runtime.GOMAXPROCS(prev)
	if !bytes.Equal(got, want) {
		t.Error("GOMAXPROCS=1 changes the bytes")
	}
	_, members := read(t, want)
	if !bytes.Equal(members[1].data, random) || !bytes.Equal(members[3].data, text.Bytes()) {
		t.Error("content does not round-trip")
	}
}

// TestGolden pins the bytes: it fails when the level, block size, header
// choices or a pinned library change the output. Update the digest only
// on purpose, and say so in the release notes: every archive changes.
func TestGolden(t *testing.T) {
	var text bytes.Buffer
	for i := 0; text.Len() < 3*BlockSize; i++ {
		fmt.Fprintf(&text, "%d %x\n", i, sha256.Sum256([]byte{byte(i), byte(i >> 8)}))
	}
	entries := []Entry{
		{Path: "README.md", Data: []byte("# golden\n")},
		{Path: "bin/tool", Data: []byte("\x7fELF"), Mode: 0o755},
		{Path: "data/table.txt", Data: text.Bytes()},
		{Path: strings.Repeat("n", 120) + "/" + strings.Repeat("m", 120), Data: []byte("pax")},
		{Path: "empty", Mode: fs.ModeDir},
	}
	_, sha, size := write(t, entries, Options{Root: "golden-1.0", MTime: epoch})
	const wantSHA = "722d1cdb82b64450f0b68372379483a42e7dad571233988d9691ccbbf3fd60c2"
	if sha != wantSHA {
		t.Errorf("golden archive is %s (%d bytes), want %s", sha, size, wantSHA)
	}
}

func TestRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	notRegular(t, fifo)
	good := Options{Root: "r"}
	for _, tc := range []struct {
		name    string
		entries []Entry
		o       Options
		want    string // in the message
	}{
		{"empty path", []Entry{{Path: ""}}, good, `""`},
		{"dotdot", []Entry{{Path: "../x"}}, good, "traversal"},
		{"inner dotdot", []Entry{{Path: "a/../../x"}}, good, "traversal"},
		{"dotdot alone", []Entry{{Path: ".."}}, good, "traversal"},
		{"absolute", []Entry{{Path: "/etc/passwd"}}, good, "absolute"},
		{"dot", []Entry{{Path: "./x"}}, good, `"."`},
		{"double slash", []Entry{{Path: "a//b"}}, good, "empty path element"},
		{"trailing slash", []Entry{{Path: "a/"}}, good, "empty path element"},
		{"backslash", []Entry{{Path: `..\x`}}, good, "backslash"},
		{"drive letter", []Entry{{Path: "C:/x"}}, good, "drive letter"},
		{"newline", []Entry{{Path: "a\nb"}}, good, "control character"},
		{"NUL", []Entry{{Path: "a\x00b"}}, good, "control character"},
		{"bad UTF-8", []Entry{{Path: "a\xffb"}}, good, "UTF-8"},
		{"duplicate", []Entry{{Path: "a/b"}, {Path: "a/b"}}, good, "a/b is given twice"},
		{"duplicate dir", []Entry{{Path: "d", Mode: fs.ModeDir}, {Path: "d", Mode: fs.ModeDir}}, good, "r/d is given twice"},
		{"file and dir", []Entry{{Path: "a"}, {Path: "a/b"}}, good, "r/a is both a file and a directory"},
		{"dir and file", []Entry{{Path: "a/b"}, {Path: "a"}}, good, "r/a is both a file and a directory"},
		{"case", []Entry{{Path: "README"}, {Path: "readme"}}, good, "differ only in letter case"},
		{"case dirs", []Entry{{Path: "Docs/a"}, {Path: "docs/b"}}, good, "differ only in letter case"},
		{"file and data", []Entry{{Path: "a", File: fifo, Data: []byte("x")}}, good, "both File and Data"},
		{"symlink", []Entry{{Path: "a", Mode: fs.ModeSymlink | 0o777}}, good, "no links"},
		{"device", []Entry{{Path: "a", Mode: fs.ModeDevice}}, good, "no links, devices"},
		{"dir with data", []Entry{{Path: "a", Mode: fs.ModeDir, Data: []byte("x")}}, good, "is a directory but has content"},
		{"missing file", []Entry{{Path: "a", File: filepath.Join(dir, "nope")}}, good, "no such file"},
		{"file is a dir", []Entry{{Path: "a", File: dir}}, good, "not a regular file"},
		{"fifo", []Entry{{Path: "a", File: fifo}}, good, "not a regular file"},
		{"no root", []Entry{{Path: "a"}}, Options{}, "root folder"},
		{"root with slash", []Entry{{Path: "a"}}, Options{Root: "a/b"}, "root folder"},
		{"root dotdot", []Entry{{Path: "a"}}, Options{Root: ".."}, "root folder"},
		{"too long", []Entry{{Path: strings.Repeat("a/", 2100) + "x"}}, good, "more than 4096"},
		{"mtime beyond USTAR", []Entry{{Path: "a"}}, Options{Root: "r", MTime: 1 << 34}, "2242"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, _, err := Write(context.Background(), &buf, tc.entries, tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
			if buf.Len() != 0 {
				t.Errorf("%d bytes written before refusing", buf.Len())
			}
		})
	}
}

func TestExplicitDirMergesWithImplied(t *testing.T) {
	a, _, _ := write(t, []Entry{{Path: "d/x"}, {Path: "d", Mode: fs.ModeDir}}, Options{Root: "r"})
	b, _, _ := write(t, []Entry{{Path: "d/x"}}, Options{Root: "r"})
	if !bytes.Equal(a, b) {
		t.Error("an explicit directory that is also implied changes the archive")
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "b.tar.gz")
	sha, size, err := WriteFile(context.Background(), p, sample(t), Options{Root: "r", MTime: epoch})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	st, _ := os.Stat(p)
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != sha || st.Size() != size || st.Mode().Perm() != 0o644 {
		t.Errorf("file %x %d %v; returned %s %d", sum, st.Size(), st.Mode(), sha, size)
	}

	// A failure half-way (a file vanishes after planning is impossible to
	// stage here; a cancelled context stands for it) leaves the old file.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := WriteFile(ctx, p, sample(t), Options{Root: "other"}); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), p) {
		t.Errorf("cancelled write: %v", err)
	}
	if after, _ := os.ReadFile(p); !bytes.Equal(after, b) {
		t.Error("failed write touched the existing archive")
	}
	if _, _, err := WriteFile(context.Background(), filepath.Join(dir, "new.tar.gz"), []Entry{{Path: "../x"}}, Options{Root: "r"}); err == nil {
		t.Error("bad entry accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if _, _, err := WriteFile(context.Background(), filepath.Join(dir, "no", "such", "x.tar.gz"), sample(t), Options{Root: "r"}); err == nil || !strings.Contains(err.Error(), "folder exists") {
		t.Errorf("missing folder: %v", err)
	}
}

func TestCopyExact(t *testing.T) {
	buf := make([]byte, 4)
	never := func() error { return nil }
	for _, tc := range []struct {
		content string
		size    int64
		err     error
	}{
		{"abcdefgh", 8, nil},
		{"abcdefgh", 7, errSizeChanged}, // grew
		{"abcdefgh", 9, errSizeChanged}, // shrank
		{"", 0, nil},
		{"a", 0, errSizeChanged},
	} {
		var out bytes.Buffer
		err := copyExact(never, &out, strings.NewReader(tc.content), tc.size, buf)
		if !errors.Is(err, tc.err) || (err == nil && out.String() != tc.content) {
			t.Errorf("%q size %d: %v %q", tc.content, tc.size, err, out.String())
		}
	}
}

func TestFileChangedSinceStat(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("short"), 0o644)
	items, mtime, err := plan([]Entry{{Path: "f", File: p}}, Options{Root: "r"})
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, []byte("longer now"), 0o644)
	tw := tar.NewWriter(io.Discard)
	err = writeItems(func() error { return nil }, tw, items, mtime)
	if err == nil || !strings.Contains(err.Error(), "changed size") || !strings.Contains(err.Error(), p) {
		t.Errorf("error %v", err)
	}
}

// TestLargeFileBoundedMemory streams a 200 MiB file (sparse on disk, with
// random stretches) and checks that the heap never grows by more than a
// few pgzip blocks: nothing buffers whole files.
func TestLargeFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("large file")
	}
	const size = 200 << 20
	dir := t.TempDir()
	p := filepath.Join(dir, "big.bin")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	chunk := make([]byte, 1<<20)
	digest := sha256.New()
	for off := int64(0); off < size; off += int64(len(chunk)) {
		if off%(8<<20) == 0 { // every 8th MiB is random, the rest zeros
			for i := range chunk {
				chunk[i] = byte(rng.Uint32())
			}
			f.WriteAt(chunk, off)
			digest.Write(chunk)
		} else {
			digest.Write(make([]byte, len(chunk)))
		}
	}
	f.Truncate(size)
	f.Close()
	want := digest.Sum(nil)

	// A low GC target keeps the heap close to the live data, so that the
	// peak measures what the writer holds, not garbage awaiting collection
	// (sync.Pool drops items at random under the race detector).
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	stop := make(chan struct{})
	peak := make(chan uint64)
	go func() {
		var m runtime.MemStats
		var max uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- max
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > max {
					max = m.HeapInuse
				}
			}
		}
	}()
	// The archive goes to a pipe read by a streaming checker, so the test
	// holds no copy of it either.
	pr, pw := io.Pipe()
	checked := make(chan error, 1)
	go func() {
		zr, err := gzip.NewReader(pr)
		if err != nil {
			checked <- err
			return
		}
		tr := tar.NewReader(zr)
		for {
			h, err := tr.Next()
			if err != nil {
				checked <- err
				return
			}
			if h.Name == "r/big.bin" {
				d := sha256.New()
				n, err := io.Copy(d, tr)
				if err == nil && (n != size || !bytes.Equal(d.Sum(nil), want)) {
					err = fmt.Errorf("content differs (%d bytes)", n)
				}
				io.Copy(io.Discard, pr)
				checked <- err
				return
			}
		}
	}()
	_, n, err := Write(context.Background(), pw, []Entry{{Path: "big.bin", File: p}}, Options{Root: "r", Concurrency: 4})
	pw.CloseWithError(err)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-checked; err != nil {
		t.Fatal(err)
	}
	close(stop)
	grew := int64(<-peak) - int64(base.HeapInuse)
	t.Logf("200 MiB file → %d byte archive; heap grew by at most %.1f MiB", n, float64(grew)/(1<<20))
	if grew > 48<<20 {
		t.Errorf("heap grew by %d MiB while streaming a 200 MiB file", grew>>20)
	}
}

// failAfter accepts n bytes, then fails.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

// cancelAfter accepts writes and cancels a context after n bytes.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(p []byte) (int, error) {
	c.n -= len(p)
	if c.n <= 0 {
		c.cancel()
	}
	return len(p), nil
}

func TestFailuresStopEarlyAndLeakNothing(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	f, _ := os.Create(big)
	f.Truncate(1 << 30) // sparse: 1 GiB of zeros
	f.Close()
	entries := []Entry{{Path: "big", File: big}, {Path: "small", Data: []byte("x")}}
	before := runtime.NumGoroutine()

	start := time.Now()
	_, _, err := Write(context.Background(), &failAfter{n: 16}, entries, Options{Root: "r"})
	if err == nil || !strings.Contains(err.Error(), "write archive: disk full") {
		t.Errorf("failing writer: %v", err)
	}
	t.Logf("failing writer stopped after %v", time.Since(start))

	ctx, cancel := context.WithCancel(context.Background())
	w := &cancelAfter{n: 10 << 10, cancel: cancel}
	_, _, err = Write(ctx, w, entries, Options{Root: "r"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if d := time.Since(start); d > 2500*time.Millisecond {
		t.Errorf("stopping took %v: the 1 GiB file was read to the end", d)
	}

	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines left behind", n-before)
	}
}
