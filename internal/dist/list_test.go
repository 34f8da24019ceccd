package dist

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
)

func writeFiles(t *testing.T, dir string, files map[string]string) []Artifact {
	t.Helper()
	n := NamesOf("vexl", "0.3.0")
	var out []Artifact
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		c := n.Classify(rel)
		a := Artifact{Kind: c.Kind, Path: rel, Target: c.Target, SHA256: checksum.Bytes([]byte(body)), Size: int64(len(body))}
		if strings.HasPrefix(rel, BinDir+"/") {
			a.Kind, a.Target = KindBinary, strings.Split(rel, "/")[1]
		}
		if a.Kind == KindWheel {
			a.Target = "linux-x86_64"
		}
		out = append(out, a)
	}
	return out
}

var sample = map[string]string{
	"vexl_plugin-0.3.0-py3-none-manylinux_2_28_x86_64.whl": "plugin",
	"vexl-0.3.0-linux-x86_64.tar.gz":                       "bundle",
	"vexl-0.3.0.spdx.json":                                 "{}\n",
	"manifest.json":                                        "{}\n",
	"RELEASE_NOTES.md":                                     "# 0.3.0\n",
	"build/linux-x86_64/vexlc":                             "elf",
}

func TestWriteArtifactListDerivesSHA256SUMS(t *testing.T) {
	dir := t.TempDir()
	as := writeFiles(t, dir, sample)
	// Signed statements are not artifacts: the list leaves them out.
	as = append(as, Artifact{Kind: KindProvenance, Path: "vexl-0.3.0.intoto.jsonl", SHA256: checksum.Bytes(nil)})
	l := NewArtifactList("vexl", "0.3.0", as)
	if len(l.Artifacts) != len(sample) {
		t.Fatalf("listed %d, want %d", len(l.Artifacts), len(sample))
	}
	self, err := WriteArtifactList(dir, l)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := checksum.ReadSums(filepath.Join(dir, ChecksumsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != len(sample)+1 {
		t.Errorf("SHA256SUMS lists %d files, want the %d artifacts and the list", len(sums), len(sample)+1)
	}
	if got, _ := sums.Lookup(ArtifactsFile); got != self.SHA256 {
		t.Errorf("SHA256SUMS has the list as %s, want %s", got, self.SHA256)
	}
	back, err := ReadArtifactList(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i, a := range back.Artifacts {
		if a != l.Artifacts[i] {
			t.Errorf("read back %+v, wrote %+v", a, l.Artifacts[i])
		}
	}
	// The standard tool agrees with every record written.
	if _, err := exec.LookPath("sha256sum"); err == nil {
		cmd := exec.Command("sha256sum", "-c", "--strict", ChecksumsFile)
		for _, a := range append(l.Artifacts, self) {
			if !strings.Contains(a.Path, "/") {
				cmd.Args = append(cmd.Args, Sidecar(a.Path))
			}
		}
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("sha256sum -c: %v\n%s", err, out)
		}
	}
}

func TestParseArtifactListRefuses(t *testing.T) {
	good := `{"schema":"` + ArtifactsSchema + `","project":"vexl","version":"0.3.0","artifacts":[` +
		`{"kind":"wheel","path":"a-1.0-py3-none-any.whl","sha256":"` + strings.Repeat("a", 64) + `","size":1}]}`
	if _, err := ParseArtifactList([]byte(good)); err != nil {
		t.Fatalf("good list refused: %v", err)
	}
	entry := func(kind, path, sha, size string) string {
		return `{"schema":"` + ArtifactsSchema + `","project":"vexl","version":"0.3.0","artifacts":[{"kind":"` + kind + `","path":"` + path + `","sha256":"` + sha + `","size":` + size + `}]}`
	}
	hex := strings.Repeat("a", 64)
	cases := map[string]struct{ data, want string }{
		"unknown field":   {strings.Replace(good, `"size":1`, `"size":1,"extra":2`, 1), "unknown field"},
		"two values":      {good + good, "more than one"},
		"unknown kind":    {entry("wheel2", "a", hex, "1"), "unknown artifact kind"},
		"signed kind":     {entry("provenance", "a", hex, "1"), "not a reproducible"},
		"absolute":        {entry("wheel", "/etc/passwd", hex, "1"), "not the relative"},
		"dotdot":          {entry("wheel", "../x", hex, "1"), "not the relative"},
		"unclean":         {entry("binary", "build/./x", hex, "1"), "not the relative"},
		"upper hex":       {entry("wheel", "a", strings.Repeat("A", 64), "1"), "lower-case hex"},
		"short digest":    {entry("wheel", "a", "abc", "1"), "lower-case hex"},
		"negative size":   {entry("wheel", "a", hex, "-1"), "negative size"},
		"lists itself":    {entry("artifacts", ArtifactsFile, hex, "1"), "not the relative"},
		"wrong schema":    {strings.Replace(good, ArtifactsSchema, "x", 1), "schema"},
		"no artifacts":    {`{"schema":"` + ArtifactsSchema + `","project":"vexl","version":"0.3.0"}`, "no artifacts"},
		"twice":           {strings.Replace(good, `}]}`, `},{"kind":"wheel","path":"a-1.0-py3-none-any.whl","sha256":"`+hex+`","size":1}]}`, 1), "twice or out of order"},
		"not json":        {"SHA256SUMS", "artifacts.json"},
		"no project name": {strings.Replace(good, `"project":"vexl"`, `"project":""`, 1), "no project"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseArtifactList([]byte(c.data))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error with %q", err, c.want)
			}
		})
	}
}

func FuzzParseArtifactList(f *testing.F) {
	f.Add([]byte(`{"schema":"` + ArtifactsSchema + `","project":"p","version":"1","artifacts":[]}`))
	f.Add([]byte(`{"artifacts":[{"kind":"wheel","path":"a","sha256":"` + strings.Repeat("0", 64) + `","size":0}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseArtifactList(data)
		if err != nil {
			return
		}
		// What parses encodes, and encodes to what parses the same.
		enc, err := l.Encode()
		if err != nil {
			t.Fatalf("parsed list does not encode: %v", err)
		}
		back, err := ParseArtifactList(enc)
		if err != nil || len(back.Artifacts) != len(l.Artifacts) {
			t.Fatalf("round trip: %v", err)
		}
	})
}

// A target's wheels are its own and the shared (pure-Python) ones; not
// another target's, nor a shared file of another kind.
func TestWheelsOf(t *testing.T) {
	var l List
	l.Add(
		Artifact{Kind: KindWheel, Path: "c-1-py3-none-manylinux_2_17_x86_64.whl", Target: "linux-x86_64"},
		Artifact{Kind: KindWheel, Path: "c-1-py3-none-manylinux_2_17_aarch64.whl", Target: "linux-aarch64"},
		Artifact{Kind: KindWheel, Path: "p-1-py3-none-any.whl"},
		Artifact{Kind: KindSBOM, Path: "demo-1.spdx.json"},
		Artifact{Kind: KindBinary, Path: "build/linux-x86_64/lib.so", Target: "linux-x86_64"},
	)
	for target, want := range map[string]string{
		"linux-x86_64":  "c-1-py3-none-manylinux_2_17_x86_64.whl p-1-py3-none-any.whl",
		"linux-aarch64": "c-1-py3-none-manylinux_2_17_aarch64.whl p-1-py3-none-any.whl",
		"windows-amd64": "p-1-py3-none-any.whl",
	} {
		var got []string
		for _, a := range l.Filter(WheelsOf(target)) {
			got = append(got, a.Path)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s: %v, want %s", target, got, want)
		}
	}
}
