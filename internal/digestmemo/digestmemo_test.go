package digestmemo

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func TestMemo(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no file identity here: every call hashes")
	}
	dir := t.TempDir()
	// A clock an hour ahead: the files written below are not racy.
	m := Memo{Dir: filepath.Join(dir, "memo"), Now: func() time.Time { return time.Now().Add(time.Hour) }}
	exe := filepath.Join(dir, "cc")
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(exe, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	check := func(step, content string) {
		t.Helper()
		got, size, err := m.SHA256(exe)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if want := checksum.Bytes([]byte(content)); got != want || size != int64(len(content)) {
			t.Errorf("%s: SHA256 = %s %d, want %s %d", step, got, size, want, len(content))
		}
	}
	write("compiler one")
	check("first", "compiler one")
	memos, _ := os.ReadDir(m.Dir)
	if len(memos) != 1 {
		t.Fatalf("memos after one file: %d, want 1", len(memos))
	}
	check("remembered", "compiler one")

	// The memo is what answers: change what it holds, and the answer changes
	// (so the test above did not just hash again).
	memo := filepath.Join(m.Dir, memos[0].Name())
	fake := checksum.Bytes([]byte("other"))
	os.WriteFile(memo, []byte(fake+" 12\n"), 0o644)
	if got, _, _ := m.SHA256(exe); got != fake {
		t.Fatalf("a valid memo was not used: got %s", got)
	}

	// Every way of changing the file makes it hashed again.
	write("compiler two, same mtime")
	check("rewritten in place", "compiler two, same mtime")
	old := time.Unix(499137600, 0)
	os.Chtimes(exe, old, old)
	check("mtime set back", "compiler two, same mtime")
	swapped := filepath.Join(dir, "cc.new")
	os.WriteFile(swapped, []byte("swapped compiler!!!!!!!!"), 0o755)
	os.Chtimes(swapped, old, old)
	if err := os.Rename(swapped, exe); err != nil {
		t.Fatal(err)
	}
	check("replaced by rename, same size and mtime", "swapped compiler!!!!!!!!")
	os.Chmod(exe, 0o700)
	check("chmod", "swapped compiler!!!!!!!!")

	// A damaged memo is ignored and replaced.
	for _, e := range mustReadDir(t, m.Dir) {
		os.WriteFile(filepath.Join(m.Dir, e.Name()), []byte("garbage"), 0o644)
	}
	check("damaged memos", "swapped compiler!!!!!!!!")

	// Missing file: an error, no memo.
	if _, _, err := m.SHA256(filepath.Join(dir, "absent")); err == nil {
		t.Error("a missing file has a digest")
	}
}

// A file changed within Racy of its hash is not remembered: a write in the
// same clock tick could leave its identity unchanged.
func TestRacyFilesAreNotRemembered(t *testing.T) {
	if !identities {
		t.Skip("no file identity here: every call hashes")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	os.WriteFile(p, []byte("fresh"), 0o644)
	m := Memo{Dir: filepath.Join(dir, "memo")}
	if _, _, err := m.SHA256(p); err != nil {
		t.Fatal(err)
	}
	if es, _ := os.ReadDir(m.Dir); len(es) != 0 {
		t.Errorf("a file written just now was remembered (%d memos)", len(es))
	}
	tab := m.Table(dir)
	if _, _, err := tab.SHA256(p); err != nil {
		t.Fatal(err)
	}
	if err := tab.Save(); err != nil {
		t.Fatal(err)
	}
	if got := m.Table(dir).old; len(got) != 0 {
		t.Errorf("a table remembered a file written just now: %v", got)
	}
}

func TestTable(t *testing.T) {
	if !identities {
		t.Skip("no file identity here: every call hashes")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	m := Memo{Dir: filepath.Join(dir, "memo"), Now: func() time.Time { return time.Now().Add(time.Hour) }}
	files := map[string]string{"a": "alpha", "b c": "bravo charlie", "d": "delta"}
	for n, c := range files {
		os.WriteFile(filepath.Join(src, n), []byte(c), 0o644)
	}
	run := func(step string, want map[string]string) {
		t.Helper()
		tab := m.Table(src)
		var wg sync.WaitGroup
		for n, c := range want {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, size, err := tab.SHA256(filepath.Join(src, n))
				if err != nil || got != checksum.Bytes([]byte(c)) || size != int64(len(c)) {
					t.Errorf("%s: %s = %s %d %v, want the digest of %q", step, n, got, size, err, c)
				}
			}()
		}
		wg.Wait()
		if err := tab.Save(); err != nil {
			t.Fatalf("%s: save: %v", step, err)
		}
	}
	run("first", files)
	tables := mustReadDir(t, filepath.Join(m.Dir, "tables"))
	if len(tables) != 1 {
		t.Fatalf("tables: %d, want 1", len(tables))
	}
	file := filepath.Join(m.Dir, "tables", tables[0].Name())
	if got := len(m.Table(src).old); got != 3 {
		t.Fatalf("rows remembered: %d, want 3", got)
	}

	// The table is what answers: a valid row with another digest is used.
	fake := checksum.Bytes([]byte("other"))
	data, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	var faked []string
	for _, l := range lines {
		faked = append(faked, fake+l[64:])
	}
	os.WriteFile(file, []byte(strings.Join(faked, "\n")+"\n"), 0o644)
	if got, _, _ := m.Table(src).SHA256(filepath.Join(src, "b c")); got != fake {
		t.Fatalf("a valid row was not used: got %s", got)
	}
	os.WriteFile(file, data, 0o644)

	// A changed file is hashed again; a file that left is forgotten.
	os.WriteFile(filepath.Join(src, "a"), []byte("ALPHA"), 0o644)
	os.Remove(filepath.Join(src, "d"))
	delete(files, "d")
	files["a"] = "ALPHA"
	run("changed", files)
	if got := m.Table(src).old; len(got) != 2 || got[filepath.Join(src, "d")].sha != "" {
		t.Errorf("after a file left: rows %v, want a and b c", got)
	}

	// A damaged table is ignored and replaced.
	os.WriteFile(file, []byte("garbage\n"+fake+" x y z\n"), 0o644)
	run("damaged", files)
	if got := len(m.Table(src).old); got != 2 {
		t.Errorf("rows after a damaged table: %d, want 2", got)
	}

	// The zero Memo's table hashes every time and saves nothing.
	tab := Memo{}.Table(src)
	if got, _, err := tab.SHA256(filepath.Join(src, "a")); err != nil || got != checksum.Bytes([]byte("ALPHA")) {
		t.Errorf("zero Memo table: %s %v", got, err)
	}
	if err := tab.Save(); err != nil {
		t.Error(err)
	}
}

func TestParseRow(t *testing.T) {
	sha := checksum.Bytes(nil)
	for _, tt := range []struct {
		line, path string
		ok         bool
	}{
		{sha + " 0 1 2 3 4 a", "a", true},
		{sha + " 5 1 2 3 4 a b c", "a b c", true},
		{sha + " -1 1 2 3 4 a", "", false},
		{sha + " 0 1 2 3 4 ", "", false},
		{sha + " 0 1 2 3 a", "", false},
		{sha + " 0 1 x 3 4 a", "", false},
		{"XYZ 0 1 2 3 4 a", "", false},
		{"", "", false},
	} {
		p, _, ok := parseRow(tt.line)
		if ok != tt.ok || p != tt.path {
			t.Errorf("parseRow(%q) = %q %v, want %q %v", tt.line, p, ok, tt.path, tt.ok)
		}
	}
}

func TestZeroMemoHashes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	os.WriteFile(p, []byte("x"), 0o644)
	got, _, err := Memo{}.SHA256(p)
	if err != nil || got != checksum.Bytes([]byte("x")) {
		t.Errorf("zero Memo: %s %v", got, err)
	}
}

func TestRead(t *testing.T) {
	sha := checksum.Bytes(nil)
	for _, tt := range []struct {
		text string
		ok   bool
	}{
		{sha + " 0\n", true},
		{sha + " 12", true},
		{sha + " -1\n", false},
		{sha + "\n", false},
		{"XYZ 1\n", false},
		{"", false},
		{sha + " 1 2\n", false},
	} {
		p := filepath.Join(t.TempDir(), "memo")
		os.WriteFile(p, []byte(tt.text), 0o644)
		if _, _, ok := read(p); ok != tt.ok {
			t.Errorf("read(%q) ok = %v, want %v", tt.text, ok, tt.ok)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// SHA256Linked remembers a file across the links and unlinks that change
// its ctime, and still sees every write made through any of its names.
func TestSHA256Linked(t *testing.T) {
	if !identities {
		t.Skip("no file identity here: every call hashes")
	}
	dir := t.TempDir()
	m := Memo{Dir: filepath.Join(dir, "memo")}
	p := filepath.Join(dir, "entry")
	os.WriteFile(p, []byte("stored wheel"), 0o644)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(p, old, old) // stored an hour ago: settled
	want := checksum.Bytes([]byte("stored wheel"))
	hash := func(step string) string {
		t.Helper()
		got, _, err := m.SHA256Linked(p)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		return got
	}
	if got := hash("first"); got != want {
		t.Fatalf("first = %s, want %s", got, want)
	}
	memos := mustReadDir(t, m.Dir)
	if len(memos) != 1 {
		t.Fatalf("%d memos, want 1", len(memos))
	}
	// The memo answers (a planted digest comes back) after a link is
	// made and another removed, both of which change the ctime.
	fake := checksum.Bytes([]byte("planted"))
	os.WriteFile(filepath.Join(m.Dir, memos[0].Name()), []byte(fake+" 12\n"), 0o644)
	link := filepath.Join(dir, "dist.whl")
	if err := os.Link(p, link); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	other := filepath.Join(dir, "old-dist.whl")
	os.Link(p, other)
	os.Remove(other)
	if got := hash("after link and unlink"); got != fake {
		t.Errorf("after link and unlink = %s, want the remembered %s", got, fake)
	}
	// A write through the other name, same size, is seen.
	os.WriteFile(link, []byte("hacked wheel"), 0o644)
	if got := hash("written in place"); got != checksum.Bytes([]byte("hacked wheel")) {
		t.Errorf("after a write in place = %s, want the new content's digest", got)
	}
	// SHA256 and SHA256Linked keep apart memos.
	if got, _, _ := m.SHA256(p); got != checksum.Bytes([]byte("hacked wheel")) {
		t.Errorf("SHA256 = %s, want the content's digest", got)
	}
}
