package checksum

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

func hexSum(s string) string {
	d := sha256.Sum256([]byte(s))
	return hex.EncodeToString(d[:])
}

func TestMarshal(t *testing.T) {
	s := Sums{
		{Name: "wheels/b.whl", SHA256: hexSum("b")},
		{Name: "SHA-README", SHA256: strings.ToUpper(hexSum("r"))},
		{Name: "a b.tar.gz", SHA256: hexSum("a")},
	}
	got, err := s.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	want := hexSum("r") + "  SHA-README\n" + hexSum("a") + "  a b.tar.gz\n" + hexSum("b") + "  wheels/b.whl\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if s[0].Name != "wheels/b.whl" {
		t.Error("Marshal reordered its receiver")
	}
	back, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := back.Marshal(); !bytes.Equal(again, got) {
		t.Error("Parse(Marshal) does not round-trip")
	}
	if sha, ok := back.Lookup("a b.tar.gz"); !ok || sha != hexSum("a") {
		t.Errorf("Lookup: %q %v", sha, ok)
	}
	if _, ok := back.Lookup("nope"); ok {
		t.Error("Lookup found a missing name")
	}
}

func TestMarshalRefuses(t *testing.T) {
	good := hexSum("x")
	for _, tc := range []struct {
		name string
		s    Sums
		want string
	}{
		{"empty name", Sums{{"", good}}, "empty name"},
		{"newline", Sums{{"a\nb", good}}, "control character"},
		{"carriage return", Sums{{"a\rb", good}}, "control character"},
		{"backslash", Sums{{`a\b`, good}}, "backslash"},
		{"absolute", Sums{{"/etc/passwd", good}}, "absolute"},
		{"traversal", Sums{{"../x", good}}, "traversal"},
		{"dot", Sums{{"./x", good}}, `"."`},
		{"trailing slash", Sums{{"x/", good}}, "empty path element"},
		{"drive", Sums{{"C:x", good}}, "drive letter"},
		{"bad UTF-8", Sums{{"\xff", good}}, "UTF-8"},
		{"duplicate", Sums{{"a", good}, {"a", good}}, "a given twice"},
		{"short digest", Sums{{"a", good[:40]}}, "40 hex digits"},
		{"not hex", Sums{{"a", strings.Repeat("g", 64)}}, "not hex"},
	} {
		if _, err := tc.s.Marshal(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestParse(t *testing.T) {
	a, b := hexSum("a"), hexSum("b")
	data := a + "  dist/x.whl\n" + strings.ToUpper(b) + " *bin ary\n" + a + "   leading space\n"
	got, err := Parse([]byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := Sums{{"dist/x.whl", a}, {"bin ary", b}, {" leading space", a}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q want %q", got, want)
	}
	// What sha256sum itself writes parses.
	if _, err := exec.LookPath("sha256sum"); err == nil {
		dir := t.TempDir()
		for _, n := range []string{"one", "two words", "ünï"} {
			os.WriteFile(filepath.Join(dir, n), []byte(n), 0o644)
		}
		cmd := exec.Command("sha256sum", "one", "two words", "ünï")
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		sums, err := Parse(out)
		if err != nil || len(sums) != 3 || sums[1].Name != "two words" || sums[1].SHA256 != hexSum("two words") {
			t.Errorf("sha256sum output: %v %q", err, sums)
		}
	}
}

func TestParseErrors(t *testing.T) {
	a := hexSum("a")
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty", "", "empty file"},
		{"no final newline", a + "  x\n" + a + "  y", "line 2: no newline at the end"},
		{"blank line", a + "  x\n\n", "line 2: empty line"},
		{"CRLF", a + "  x\r\n", "line 1: line ends in a carriage return"},
		{"CR inside", a + "  x\ry\n", "line 1: name contains a carriage return"},
		{"NUL", a + "  x\x00y\n", "line 1: line contains a NUL"},
		{"escaped", `\` + a + "  a\\\\b\n", "line 1: escaped name"},
		{"comment", "# sums\n", "line 1: comment"},
		{"BSD", "SHA256 (x) = " + a + "\n", "line 1: BSD-style"},
		{"sha1", a[:40] + "  x\n", "line 1: digest has 40 hex digits"},
		{"sha512", a + a + "  x\n", "line 1: digest has 128 hex digits"},
		{"not hex", "zz  x\n", `line 1: "zz  x" does not start with a sha256`},
		{"one space", a + " x\n", "line 1: the digest must be followed by two spaces"},
		{"tab", a + "\tx\n", "line 1: the digest must be followed"},
		{"bad marker", a + " ?x\n", "line 1: the digest must be followed"},
		{"no name", a + "  \n", "line 1: no file name"},
		{"digest only", a + "\n", "line 1: the digest must be followed"},
		{"duplicate", a + "  x\n" + a + "  y\n" + a + " *x\n", "line 3: x is listed again (first on line 1)"},
	} {
		_, err := Parse([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestReadSumsNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "SHA256SUMS")
	os.WriteFile(p, []byte(hexSum("a")+"  a\nnonsense\n"), 0o644)
	if _, err := ReadSums(p); err == nil || !strings.Contains(err.Error(), p+": line 2:") {
		t.Errorf("error %v", err)
	}
	if _, err := ReadSums(p + ".missing"); err == nil || !strings.Contains(err.Error(), p+".missing") {
		t.Errorf("error %v", err)
	}
}

func TestFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	content := bytes.Repeat([]byte("0123456789"), 300_000) // > 1 read
	os.WriteFile(p, content, 0o644)
	sha, size, err := File(p)
	if err != nil || sha != hexSum(string(content)) || size != int64(len(content)) {
		t.Errorf("%s %d %v", sha, size, err)
	}
	if _, _, err := File(p + "x"); err == nil || !strings.Contains(err.Error(), p+"x") {
		t.Errorf("error %v", err)
	}
}

// release makes a folder of artifacts and returns it with its sums.
func release(t *testing.T) (string, Sums) {
	dir := t.TempDir()
	files := map[string]string{
		"vexl-0.3.0-linux-x86_64.tar.gz":          "bundle bytes",
		"vexl_compiler-0.3.0-py3-none-any.whl":    "compiler wheel",
		"vexl_plugin-0.3.0-py3-none-any.whl":      "plugin wheel",
		"wheels/dep with space-1.0-py3-none.whl":  "dependency",
		"licenses/Ünïcödé.txt":                    "license text",
		"empty.txt":                               "",
		"vexl-0.3.0.spdx.json":                    "{}\n",
		"deep/er/still/vexl-0.3.0.intoto.jsonl":   "statement",
		"vexl-0.3.0-linux-x86_64.tar.gz.extra.gz": "more bytes",
	}
	var s Sums
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		s = append(s, Sum{Name: name, SHA256: hexSum(content)})
	}
	return dir, s
}

func TestToolsAcceptWhatWeWrite(t *testing.T) {
	dir, s := release(t)
	if err := WriteSums(filepath.Join(dir, "SHA256SUMS"), s); err != nil {
		t.Fatal(err)
	}
	var sidecars []string
	for _, sum := range s {
		if strings.Contains(sum.Name, "/") {
			continue
		}
		if err := WriteSums(filepath.Join(dir, sum.Name+".sha256"), Sums{sum}); err != nil {
			t.Fatal(err)
		}
		sidecars = append(sidecars, sum.Name+".sha256")
	}
	for _, tool := range [][]string{{"sha256sum", "-c", "--strict"}, {"shasum", "-a", "256", "-c", "--strict"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("no %s", tool[0])
			continue
		}
		for _, file := range append([]string{"SHA256SUMS"}, sidecars...) {
			cmd := exec.Command(tool[0], append(tool[1:], file)...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s %s: %v\n%s", strings.Join(tool, " "), file, err, out)
				continue
			}
			if file == "SHA256SUMS" && strings.Count(string(out), ": OK\n") != len(s) {
				t.Errorf("%s: %s", tool[0], out)
			}
		}
		// And they notice tampering, so the check above means something.
		p := filepath.Join(dir, "vexl_plugin-0.3.0-py3-none-any.whl")
		orig, _ := os.ReadFile(p)
		os.WriteFile(p, []byte("tampered"), 0o644)
		cmd := exec.Command(tool[0], append(tool[1:], "vexl_plugin-0.3.0-py3-none-any.whl.sha256")...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("%s accepted a tampered file: %s", tool[0], out)
		}
		os.WriteFile(p, orig, 0o644)
	}
	side, _ := os.ReadFile(filepath.Join(dir, "vexl_plugin-0.3.0-py3-none-any.whl.sha256"))
	if string(side) != hexSum("plugin wheel")+"  vexl_plugin-0.3.0-py3-none-any.whl\n" {
		t.Errorf("sidecar %q", side)
	}
}

type want struct {
	name    string
	problem Problem
	detail  string // in Msg, when set
}

func check(t *testing.T, rep Report, wants ...want) {
	t.Helper()
	if len(rep.Findings) != len(wants) {
		t.Fatalf("findings:\n%v\nwant %v", rep.Err(), wants)
	}
	for i, w := range wants {
		f := rep.Findings[i]
		if f.File != w.name || Problem(f.Check) != w.problem || !strings.Contains(f.Msg, w.detail) {
			t.Errorf("finding %d: %s, want %s %v %q", i, f, w.name, w.problem, w.detail)
		}
		if !strings.Contains(Describe(f), w.name) || !strings.Contains(rep.Err().Error(), Describe(f)) {
			t.Errorf("finding %d does not name the file: %s", i, f)
		}
	}
	if len(wants) == 0 && rep.Err() != nil {
		t.Error("Err() not nil for a clean report")
	}
}

func TestVerifyTamperMatrix(t *testing.T) {
	ctx := context.Background()
	opts := VerifyOptions{Unlisted: true, Ignore: []string{"SHA256SUMS", "*.sha256"}}
	const (
		bundle   = "vexl-0.3.0-linux-x86_64.tar.gz"
		compiler = "vexl_compiler-0.3.0-py3-none-any.whl"
		plugin   = "vexl_plugin-0.3.0-py3-none-any.whl"
		dep      = "wheels/dep with space-1.0-py3-none.whl"
	)
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string, s Sums) Sums
		wants  []want
	}{
		{"clean", func(t *testing.T, dir string, s Sums) Sums {
			os.WriteFile(filepath.Join(dir, "SHA256SUMS"), nil, 0o644)
			os.WriteFile(filepath.Join(dir, "x.sha256"), nil, 0o644)
			return s
		}, nil},
		{"flipped byte", func(t *testing.T, dir string, s Sums) Sums {
			p := filepath.Join(dir, bundle)
			b, _ := os.ReadFile(p)
			b[3] ^= 1
			os.WriteFile(p, b, 0o644)
			return s
		}, []want{{bundle, Mismatch, ""}}},
		{"truncated", func(t *testing.T, dir string, s Sums) Sums {
			os.Truncate(filepath.Join(dir, filepath.FromSlash(dep)), 4)
			return s
		}, []want{{dep, Mismatch, ""}}},
		{"emptied", func(t *testing.T, dir string, s Sums) Sums {
			os.Truncate(filepath.Join(dir, compiler), 0)
			return s
		}, []want{{compiler, Mismatch, "empty"}}},
		{"missing", func(t *testing.T, dir string, s Sums) Sums {
			os.Remove(filepath.Join(dir, plugin))
			return s
		}, []want{{plugin, Missing, ""}}},
		{"extra files", func(t *testing.T, dir string, s Sums) Sums {
			os.WriteFile(filepath.Join(dir, "evil.whl"), []byte("x"), 0o644)
			os.WriteFile(filepath.Join(dir, "wheels", "evil.whl"), []byte("x"), 0o644)
			os.Symlink("/etc/passwd", filepath.Join(dir, "link"))
			return s
		}, []want{{"evil.whl", Unlisted, ""}, {"link", Unlisted, "symbolic link"}, {"wheels/evil.whl", Unlisted, ""}}},
		{"swapped", func(t *testing.T, dir string, s Sums) Sums {
			a, b := filepath.Join(dir, compiler), filepath.Join(dir, plugin)
			os.Rename(a, a+".tmp")
			os.Rename(b, a)
			os.Rename(a+".tmp", b)
			return s
		}, []want{{compiler, Mismatch, "listed for " + plugin}, {plugin, Mismatch, "listed for " + compiler}}},
		{"directory", func(t *testing.T, dir string, s Sums) Sums {
			p := filepath.Join(dir, bundle)
			os.Remove(p)
			os.Mkdir(p, 0o755)
			return s
		}, []want{{bundle, NotRegular, "directory"}}},
		{"symlink", func(t *testing.T, dir string, s Sums) Sums {
			p := filepath.Join(dir, bundle)
			os.Rename(p, p+".real")
			os.Symlink(bundle+".real", p)
			return append(s, Sum{bundle + ".real", hexSum("bundle bytes")})
		}, []want{{bundle, NotRegular, "symbolic link"}}},
		{"through a file or a link out", func(t *testing.T, dir string, s Sums) Sums {
			out := t.TempDir()
			os.WriteFile(filepath.Join(out, "secret"), []byte("x"), 0o644)
			os.Symlink(out, filepath.Join(dir, "linkdir"))
			return append(s, Sum{"empty.txt/x", hexSum("x")}, Sum{"linkdir/secret", hexSum("x")})
		}, []want{{"empty.txt/x", Missing, ""}, {"linkdir", Unlisted, "symbolic link"}, {"linkdir/secret", Unreadable, "escapes"}}},
		{"unsafe names", func(t *testing.T, dir string, s Sums) Sums {
			// A real file outside the folder with the listed content:
			// it must not be read.
			os.WriteFile(filepath.Join(filepath.Dir(dir), "outside"), []byte("x"), 0o644)
			return append(s,
				Sum{"../outside", hexSum("x")},
				Sum{"/etc/hostname", hexSum("x")},
				Sum{"a/../" + plugin, hexSum("plugin wheel")},
				Sum{`..\outside`, hexSum("x")},
			)
		}, []want{{"../outside", UnsafeName, "traversal"}, {`..\outside`, UnsafeName, "backslash"}, {"/etc/hostname", UnsafeName, "absolute"}, {"a/../" + plugin, UnsafeName, "traversal"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, s := release(t)
			s = tc.tamper(t, dir, s)
			rep, err := Verify(ctx, dir, s, opts)
			if err != nil {
				t.Fatal(err)
			}
			check(t, rep, tc.wants...)
			if tc.wants == nil && len(rep.Verified) != len(s) {
				t.Errorf("verified %d of %d", len(rep.Verified), len(s))
			}
		})
	}
}

func TestVerifyBadLineNamesTheLine(t *testing.T) {
	dir, s := release(t)
	p := filepath.Join(dir, "SHA256SUMS")
	WriteSums(p, s)
	b, _ := os.ReadFile(p)
	lines := strings.SplitAfter(string(b), "\n")
	lines[2] = lines[2][1:] // a digit lost
	os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644)
	if _, err := ReadSums(p); err == nil || !strings.Contains(err.Error(), "SHA256SUMS: line 3: digest has 63 hex digits") {
		t.Errorf("error %v", err)
	}
}

func TestVerifyUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads everything")
	}
	dir, s := release(t)
	os.Chmod(filepath.Join(dir, "empty.txt"), 0)
	rep, err := Verify(context.Background(), dir, s, VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check(t, rep, want{"empty.txt", Unreadable, "permission denied"})
}

func TestVerifyErrors(t *testing.T) {
	dir, s := release(t)
	if _, err := Verify(context.Background(), filepath.Join(dir, "nope"), s, VerifyOptions{}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing folder: %v", err)
	}
	if _, err := Verify(context.Background(), dir, s, VerifyOptions{Ignore: []string{"["}}); err == nil {
		t.Error("bad pattern accepted")
	}
	if _, err := Verify(context.Background(), dir, append(s, s[0]), VerifyOptions{}); err == nil || !strings.Contains(err.Error(), s[0].Name+" twice") {
		t.Errorf("duplicate: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Verify(ctx, dir, s, VerifyOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestReportJSON(t *testing.T) {
	rep := Report{Verified: []string{"a"}, Findings: []Finding{NewMismatch("b", "1", "2", "")}}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"verified":["a"],"findings":[{"check":"mismatch","file":"b","want":"1","got":"2","message":"sha256 mismatch: listed 1, file has 2; the file was changed, truncated or replaced: rebuild or download it again"}]}` {
		t.Errorf("%s", b)
	}
	if Problem("").String() != `Problem("")` || Problem("x").String() != `Problem("x")` {
		t.Error("unknown problems")
	}
}

// TestFindingText pins the text of every problem's finding and of
// Report.Err, which callers show and tests elsewhere match.
func TestFindingText(t *testing.T) {
	for _, tt := range []struct {
		f    Finding
		want string
	}{
		{NewFinding("a", Missing, ""), "a: missing; restore the file or rebuild the release"},
		{NewMismatch("b", "1", "2", "the file is empty"), "b: sha256 mismatch: listed 1, file has 2 (the file is empty); the file was changed, truncated or replaced: rebuild or download it again"},
		{NewFinding("c", Unlisted, "a symlink"), "c: not listed (a symlink); remove it, or regenerate the checksums if it belongs to the release"},
		{NewFinding("../d", UnsafeName, "has a .. element"), "../d: unsafe name (has a .. element); the checksum file may be malicious: do not use it"},
		{NewFinding("e", NotRegular, "a directory"), "e: not a regular file (a directory); listed files must be regular files"},
		{NewFinding("f", Unreadable, "permission denied"), "f: unreadable (permission denied); check the file's permissions and the disk"},
		{NewFinding("g", WrongName, "sidecar g.sha256 names \"g\" instead of \"h\""), "g: sidecar names another file (sidecar g.sha256 names \"g\" instead of \"h\"); the sidecar belongs to another file: regenerate it"},
	} {
		if got := Describe(tt.f); got != tt.want {
			t.Errorf("Describe = %q\nwant       %q", got, tt.want)
		}
	}
	rep := Report{Findings: []Finding{NewFinding("a", Missing, ""), NewFinding("c", Unlisted, "")}}
	want := "checksum verification failed, 2 problem(s):\n  a: missing; restore the file or rebuild the release\n  c: not listed; remove it, or regenerate the checksums if it belongs to the release"
	if err := rep.Err(); err == nil || err.Error() != want {
		t.Errorf("Err() = %q\nwant %q", err, want)
	}
	if err := (Report{}).Err(); err != nil {
		t.Errorf("Err() of a clean report = %v", err)
	}
}

func TestWritesAreAtomicAndRefuseBadInput(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "d"), 0o755)
	os.WriteFile(filepath.Join(dir, "a\\b"), nil, 0o644)
	if err := WriteSums(filepath.Join(dir, "a.sums"), Sums{{`a\b`, hexSum("x")}}); err == nil || !strings.Contains(err.Error(), "backslash") {
		t.Errorf("backslash name: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "ok"), nil, 0o644)
	if err := WriteSums(filepath.Join(dir, "ok.sums"), Sums{{"ok", "abc"}}); err == nil || !strings.Contains(err.Error(), "ok.sums") {
		t.Errorf("bad digest: %v", err)
	}
	p := filepath.Join(dir, "SHA256SUMS")
	if err := WriteSums(p, Sums{{"../x", hexSum("x")}}); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("bad sums: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if strings.Join(names, ",") != `a\b,d,ok` {
		t.Errorf("left behind: %v", names)
	}
	st, _ := os.Stat(dir)
	if err := WriteSums(p, Sums{{"ok", emptySHA256}}); err != nil {
		t.Fatal(err)
	}
	if fst, _ := os.Stat(p); fst.Mode().Perm() != 0o644 || st == nil {
		t.Errorf("mode %v", fst.Mode())
	}
}

func FuzzParse(f *testing.F) {
	a := hexSum("a")
	for _, seed := range []string{
		"",
		a + "  x\n",
		a + " *x\n" + a + "  y/z\n",
		strings.ToUpper(a) + "  x y\n",
		`\` + a + "  a\\nb\n",
		a + "  x\r\n",
		"SHA256 (x) = " + a + "\n",
		a + "  ../x\n",
		a + "  x",
		a + "  x\n" + a + "  x\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sums, err := Parse(data)
		if err != nil {
			if strings.Count(err.Error(), "line ") == 0 && len(data) > 0 {
				t.Errorf("error without a line number: %v", err)
			}
			return
		}
		if len(sums) == 0 {
			t.Fatal("no sums and no error")
		}
		seen := map[string]bool{}
		for _, s := range sums {
			if s.Name == "" || strings.ContainsAny(s.Name, "\n\r\x00") || seen[s.Name] {
				t.Fatalf("bad name %q", s.Name)
			}
			seen[s.Name] = true
			if _, err := NormalDigest(s.SHA256); err != nil || s.SHA256 != strings.ToLower(s.SHA256) {
				t.Fatalf("bad digest %q", s.SHA256)
			}
		}
		out, err := sums.Marshal()
		if err != nil {
			// Only names Verify would call unsafe are refused.
			for _, s := range sums {
				if CheckName(s.Name) != nil {
					return
				}
			}
			t.Fatalf("Marshal refused parsed sums: %v", err)
		}
		again, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal): %v", err)
		}
		sorted := append(Sums(nil), sums...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
		if !reflect.DeepEqual(again, sorted) {
			t.Fatalf("round trip: %q != %q", again, sorted)
		}
	})
}

func TestVerifyKnownDigestsAreNotRehashed(t *testing.T) {
	dir, s := release(t)
	name := "vexl-0.3.0-linux-x86_64.tar.gz"
	listed, _ := s.Lookup(name)
	// A wrong digest given as known is what Verify compares with: the
	// file, unchanged and matching its line, is not read.
	wrong := hexSum("not the bundle")
	rep, err := Verify(t.Context(), dir, s, VerifyOptions{Known: map[string]string{name: wrong}})
	if err != nil {
		t.Fatal(err)
	}
	check(t, rep, want{name, Mismatch, ""})
	if rep.Findings[0].Got != wrong || rep.Findings[0].Want != listed {
		t.Errorf("finding %+v", rep.Findings[0])
	}
	// The right digest verifies, like hashing would; a known digest for a
	// file that is gone is still reported missing.
	rep, err = Verify(t.Context(), dir, s, VerifyOptions{Known: map[string]string{name: listed}})
	if err != nil || !rep.OK() || len(rep.Verified) != len(s) {
		t.Fatalf("%v %v", rep.Err(), err)
	}
	os.Remove(filepath.Join(dir, name))
	rep, _ = Verify(t.Context(), dir, s, VerifyOptions{Known: map[string]string{name: listed}})
	check(t, rep, want{name, Missing, ""})
}

func TestJSON(t *testing.T) {
	type doc struct {
		B string            `json:"b"`
		A map[string]string `json:"a"`
	}
	for _, tc := range []struct {
		name string
		v    any
		want string // the document the digest must be of
	}{
		{"struct fields in order, map keys sorted", doc{B: "x", A: map[string]string{"z": "1", "y": "2"}}, `{"b":"x","a":{"y":"2","z":"1"}}`},
		{"string", "ab", `"ab"`},
		{"nil", nil, `null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := JSON(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(tc.want))
			if want := hex.EncodeToString(sum[:]); got != want {
				t.Errorf("JSON(%#v) = %s, want the sha256 of %s (%s)", tc.v, got, tc.want, want)
			}
		})
	}
	if _, err := JSON(make(chan int)); err == nil || !strings.Contains(err.Error(), "chan int") {
		t.Errorf("JSON of a channel: %v, want an error naming the type", err)
	}
}
