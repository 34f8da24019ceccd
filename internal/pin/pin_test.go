package pin

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/url"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"
)

const (
	commit = "0123456789abcdef0123456789abcdef01234567"
	sha    = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	tree   = "h1:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
)

func TestLookup(t *testing.T) {
	for _, k := range Kinds() {
		got, ok := Lookup(k.Name())
		if !ok || got != k {
			t.Errorf("Lookup(%q) = %v, %v; want %v", k.Name(), got, ok, k)
		}
	}
	if k, ok := Lookup("svn"); ok {
		t.Errorf("Lookup(svn) = %v, want none", k)
	}
	if got, want := Want(), `"local", "git" or "archive"`; got != want {
		t.Errorf("Want() = %s, want %s", got, want)
	}
}

func TestResolved(t *testing.T) {
	repo := Project{Repository: "https://github.com/vexl-dev/release", Dir: "packaging", Name: "vexl", Version: "0.3.0"}
	bare := Project{Name: "vexl", Version: "0.3.0+local.1"}
	for _, tc := range []struct {
		kind    Kind
		src     Source
		project Project
		uri     string
		digest  map[string]string
	}{
		// A folder of the project: its repository when known, else the
		// project's package URL; never a path of the build machine.
		{Local, Source{Location: "backend/src"}, repo, "git+https://github.com/vexl-dev/release#packaging/backend/src", nil},
		{Local, Source{Location: "backend/src"}, Project{Repository: "git+https://github.com/vexl-dev/release", Name: "vexl", Version: "1"},
			"git+https://github.com/vexl-dev/release#backend/src", nil},
		{Local, Source{Location: "backend/src"}, bare, "pkg:generic/vexl@0.3.0+local.1#backend/src", nil},
		{Local, Source{Location: "back end/src"}, bare, "pkg:generic/vexl@0.3.0+local.1#back%20end/src", nil},
		// A repository by URL: git+URL@COMMIT, "git+" not doubled, scp-like
		// spelt as ssh; file:// is the one machine path, as release.toml
		// pins it.
		{Git, Source{Location: "https://github.com/vexl-dev/vexl.git", Commit: commit}, repo,
			"git+https://github.com/vexl-dev/vexl.git@" + commit, map[string]string{"gitCommit": commit}},
		{Git, Source{Location: "git+https://github.com/vexl-dev/vexl.git", Commit: commit}, repo,
			"git+https://github.com/vexl-dev/vexl.git@" + commit, map[string]string{"gitCommit": commit}},
		{Git, Source{Location: "git@github.com:vexl-dev/vexl.git", Commit: commit}, repo,
			"git+ssh://git@github.com/vexl-dev/vexl.git@" + commit, map[string]string{"gitCommit": commit}},
		{Git, Source{Location: "file:///srv/git/vexl.git", Commit: commit}, bare,
			"git+file:///srv/git/vexl.git@" + commit, map[string]string{"gitCommit": commit}},
		// A repository kept in the project: named as a project folder, its
		// commit a digest.
		{Git, Source{Location: "third_party/vexl.git", Commit: commit}, repo,
			"git+https://github.com/vexl-dev/release#packaging/third_party/vexl.git", map[string]string{"gitCommit": commit}},
		{Git, Source{Location: "third_party/vexl.git", Commit: commit}, bare,
			"pkg:generic/vexl@0.3.0+local.1#third_party/vexl.git", map[string]string{"gitCommit": commit}},
		// An archive: its URL, or as a project file.
		{Archive, Source{Location: "https://example.org/vexl-1.0.tar.gz", SHA256: sha}, repo,
			"https://example.org/vexl-1.0.tar.gz", map[string]string{"sha256": sha}},
		{Archive, Source{Location: "third_party/vexl-1.0.tar.gz", SHA256: sha}, repo,
			"git+https://github.com/vexl-dev/release#packaging/third_party/vexl-1.0.tar.gz", map[string]string{"sha256": sha}},
		{Archive, Source{Location: "third_party/vexl-1.0.tar.gz", SHA256: sha}, bare,
			"pkg:generic/vexl@0.3.0+local.1#third_party/vexl-1.0.tar.gz", map[string]string{"sha256": sha}},
	} {
		uri, digest := tc.kind.Resolved(tc.src, tc.project)
		if uri != tc.uri || !maps.Equal(digest, tc.digest) {
			t.Errorf("%s.Resolved(%q, %+v) = %q, %v; want %q, %v", tc.kind.Name(), tc.src.Location, tc.project, uri, digest, tc.uri, tc.digest)
		}
		if u, err := url.Parse(uri); err != nil || !u.IsAbs() {
			t.Errorf("%s.Resolved(%q) = %q: not an absolute URI (%v)", tc.kind.Name(), tc.src.Location, uri, err)
		}
	}
}

func TestSameRepository(t *testing.T) {
	const canonical = "https://github.com/vexl-dev/vexl"
	for _, tc := range []struct {
		remote string
		same   bool
	}{
		{"https://github.com/vexl-dev/vexl", true},
		{"https://github.com/vexl-dev/vexl.git", true},
		{"https://github.com/vexl-dev/vexl/", true},
		{"http://GitHub.com/vexl-dev/vexl", true},
		{"ssh://git@github.com:22/vexl-dev/vexl.git", true},
		{"git+ssh://git@github.com/vexl-dev/vexl.git", true},
		{"git@github.com:vexl-dev/vexl.git", true},
		{"git://github.com/vexl-dev/vexl", true},
		{"https://github.com/vexl-dev/vexl-fork", false},
		{"https://github.com/vexl-dev/vexl/tree/main/backend", false},
		{"https://gitlab.com/vexl-dev/vexl", false},
		{"file:///srv/git/vexl", false},
		{"/srv/git/vexl", false},
		{"../vexl", false},
		{"", false},
	} {
		if got := SameRepository(canonical, tc.remote); got != tc.same {
			t.Errorf("SameRepository(%q, %q) = %v, want %v", canonical, tc.remote, got, tc.same)
		}
	}
}

func TestCheckAndVersion(t *testing.T) {
	for _, tc := range []struct {
		kind    Kind
		src     Source
		field   string // "" = accepted
		version string
	}{
		{Local, Source{Tree: tree}, "", tree},
		{Git, Source{Commit: commit, Tree: tree}, "", commit},
		{Git, Source{Commit: strings.Repeat("ab", 32), Tree: tree}, "", strings.Repeat("ab", 32)},
		{Git, Source{Commit: "0123456", Tree: tree}, "commit", "0123456"},
		{Git, Source{Commit: strings.ToUpper(commit), Tree: tree}, "commit", strings.ToUpper(commit)},
		{Archive, Source{SHA256: sha, Tree: tree}, "", tree},
		{Archive, Source{SHA256: "", Tree: tree}, "sha256", tree},
	} {
		field, msg := tc.kind.Check(tc.src)
		if field != tc.field || (field == "") != (msg == "") {
			t.Errorf("%s.Check(%+v) = %q, %q; want field %q", tc.kind.Name(), tc.src, field, msg, tc.field)
		}
		if v := tc.kind.Version(tc.src); v != tc.version {
			t.Errorf("%s.Version(%+v) = %q, want %q", tc.kind.Name(), tc.src, v, tc.version)
		}
	}
}

func TestDownload(t *testing.T) {
	for _, tc := range []struct {
		kind      Kind
		loc       string
		want      string // download location; "" = refused
		infoLacks string // a string sourceInfo must not contain
	}{
		{Git, "https://github.com/vexl-dev/vexl.git", "git+https://github.com/vexl-dev/vexl.git@" + commit, ""},
		{Git, "git+https://github.com/vexl-dev/vexl.git", "git+https://github.com/vexl-dev/vexl.git@" + commit, ""},
		{Git, "ssh://git@example.org/vexl.git", "git+ssh://git@example.org/vexl.git@" + commit, ""},
		{Git, "git://example.org/vexl", "git+git://example.org/vexl@" + commit, ""},
		{Git, "git@github.com:vexl-dev/vexl.git", "git+ssh://git@github.com/vexl-dev/vexl.git@" + commit, ""},
		{Git, "vendor/vexl.git", "NOASSERTION", ""},
		{Git, "file:///home/someone/vexl.git", "NOASSERTION", "/home/someone"},
		{Git, "/home/someone/vexl.git", "", ""},
		{Git, "https://user:secret@example.org/vexl.git", "", ""},
		{Git, "https://token@example.org/vexl.git", "", ""},
		{Archive, "https://example.org/vexl-1.0.tar.gz", "https://example.org/vexl-1.0.tar.gz", ""},
		{Archive, "third_party/vexl-1.0.tar.gz", "NOASSERTION", ""},
		{Archive, "ftp://example.org/vexl-1.0.tar.gz", "", ""},
		{Archive, "../outside.tar.gz", "", ""},
		{Archive, "https://user:secret@example.org/vexl-1.0.tar.gz", "", ""},
		{Local, "backend/src", "NOASSERTION", ""},
		{Local, "/srv/backend/src", "", ""},
		{Local, "backend/./src", "", ""},
		{Local, "C:/src", "", ""},
		{Local, "", "", ""},
	} {
		loc, info, msg := tc.kind.Download(Source{Kind: tc.kind.Name(), Location: tc.loc, Commit: commit, SHA256: sha})
		if tc.want == "" {
			if msg == "" {
				t.Errorf("%s.Download(%q) = %q, want a refusal", tc.kind.Name(), tc.loc, loc)
			} else if strings.Contains(msg, "secret") || strings.Contains(msg, "token@") {
				t.Errorf("refusal of %q shows the credential: %s", tc.loc, msg)
			}
			continue
		}
		if msg != "" || loc != tc.want || info == "" {
			t.Errorf("%s.Download(%q) = %q, %q, %q; want %q", tc.kind.Name(), tc.loc, loc, info, msg, tc.want)
		}
		if tc.infoLacks != "" && strings.Contains(info, tc.infoLacks) {
			t.Errorf("sourceInfo of %q records %q: %s", tc.loc, tc.infoLacks, info)
		}
	}
}

// TestEncoding pins the bytes release.lock (TOML) and manifest.json (JSON)
// write for a source: the lock keeps size, strip_components and files, the
// manifest leaves them out.
func TestEncoding(t *testing.T) {
	s := Source{Name: "vendor", Kind: ArchiveName, Location: "https://example.org/v.tar.gz", Commit: "", SHA256: sha,
		Size: 42, StripComponents: 1, Tree: tree, Files: []string{"a"}}
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(s); err != nil {
		t.Fatal(err)
	}
	wantTOML := "name = 'vendor'\nkind = 'archive'\nlocation = 'https://example.org/v.tar.gz'\nsha256 = '" + sha +
		"'\nsize = 42\nstrip_components = 1\ntree = '" + tree + "'\nfiles = ['a']\n"
	if b.String() != wantTOML {
		t.Errorf("TOML:\n%s\nwant:\n%s", b.String(), wantTOML)
	}
	g := Source{Name: "vexl", Kind: GitName, Location: "https://example.org/vexl.git", Commit: commit, CommitTime: 1700000000, Tree: tree, Files: []string{"a"}}
	for _, tc := range []struct {
		src  Source
		want string
	}{
		{s, `{"name":"vendor","kind":"archive","location":"https://example.org/v.tar.gz","sha256":"` + sha + `","tree":"` + tree + `"}`},
		{g, `{"name":"vexl","kind":"git","location":"https://example.org/vexl.git","commit":"` + commit + `","commit_time":1700000000,"tree":"` + tree + `"}`},
	} {
		data, err := json.Marshal(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != tc.want {
			t.Errorf("JSON:\n%s\nwant:\n%s", data, tc.want)
		}
	}
}
