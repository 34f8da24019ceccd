package sanitize

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestPrivateString(t *testing.T) {
	p := testPrivate()
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"nothing private", "nothing private"},
		// Longest first: the venv inside the temporary folder.
		{"/tmp/mk-1/venv/bin/python -m pytest", "{venv}/bin/python -m pytest"},
		{"/tmp/mk-1/x", "{tmp}/mk-1/x"},
		{"/tmp/mk-1/venvs/x", "{tmp}/mk-1/venvs/x"},
		{"/private/tmp/mk-1/venv/lib", "{venv}/lib"},
		{"cd /srv/scratch/mk-1 && ls", "cd {work} && ls"},
		{"HOME=/home/alice PATH=/home/alice/.local/bin:/usr/bin", "HOME=~ PATH=~/.local/bin:/usr/bin"},
		{"file:///home/alice/x.whl", "file://~/x.whl"},
		{`"TMPDIR": "/tmp"`, `"TMPDIR": "{tmp}"`},
		{"/mnt/alice/data and C:\\Users\\alice\\x", "/mnt/{user}/data and C:\\Users\\{user}\\x"},
		{"ran on alice-mbp.local as alice", "ran on {host}.local as alice"},
		{"ALICE-MBP", "{host}"},
		// Not at boundaries: left alone.
		{"/tmpfs x/tmp/y ../tmp /home/alicex malice alices alice-mbp2",
			"/tmpfs x/tmp/y ../tmp /home/alicex malice alices {user}-mbp2"},
		// The user name as part of a path, a file name or an identifier.
		{"/home/alice.bak /alice.txt {tmp}/pytest-of-alice alice@example.org USER=alice",
			"/home/{user}.bak /{user}.txt {tmp}/pytest-of-{user} {user}@example.org USER={user}"},
		// Other users' paths and credentials are the Scanner's business.
		{"/home/bob/x", "/home/bob/x"},
		// Placeholders stay as they are.
		{"{tmp}/x ~/x {venv} /home/{user}", "{tmp}/x ~/x {venv} /home/{user}"},
	} {
		if got := p.String(c.in); got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := p.String(p.String(c.in)); got != c.want {
			t.Errorf("String(String(%q)) = %q, want %q (not idempotent)", c.in, got, c.want)
		}
	}
}

func TestPrivateStringIgnoresUnusableValues(t *testing.T) {
	p := Private{Home: "/", User: "lib", Host: "localhost", Temp: "tmp", Folders: map[string]string{"": "{x}", "relative/dir": "{y}"}}
	in := "/ lib /usr/lib localhost relative/dir tmp"
	if got := p.String(in); got != in {
		t.Errorf("String(%q) = %q, want it unchanged", in, got)
	}
	if got := (Private{User: "al"}).String("/al/x"); got != "/al/x" {
		t.Errorf("a two-byte user name was replaced: %q", got)
	}
}

func TestPrivateWith(t *testing.T) {
	p := testPrivate()
	q := p.With("/opt/runs/7", "{run}")
	if _, ok := p.Folders["/opt/runs/7"]; ok {
		t.Error("With modified the receiver's Folders")
	}
	if got := q.String("/opt/runs/7/out"); got != "{run}/out" {
		t.Errorf("String = %q", got)
	}
	if got := (Private{}).With("/a/b", "{ab}").String("/a/b"); got != "{ab}" {
		t.Errorf("With on a zero Private: %q", got)
	}
}

func TestPrivateEnv(t *testing.T) {
	p := testPrivate()
	token := "gh" + "p_" + chars(36, 1)
	env := map[string]string{
		"HOME":           "/home/alice",
		"USER":           "alice",
		"TMPDIR":         "/tmp",
		"PATH":           "/tmp/mk-1/venv/bin:/usr/bin",
		"HOSTNAME":       "alice-mbp",
		"LANG":           "C.UTF-8",
		"TZ":             "UTC",
		"PYTHONHASHSEED": "0",
		"VEXL_PROFILE":   "/home/alice/profiles/fast.toml",
		"VEXL_CACHE":     "/tmp/mk-1/venv/cache",
		"VEXL_TOKEN":     token,
		"VEXL_PEER":      "/home/bob/x",
		"VEXL_UNLISTED":  "1",
	}
	got := p.Env(env, "VEXL_PROFILE", "VEXL_CACHE", "VEXL_TOKEN", "VEXL_PEER", "PATH", "HOME", "VEXL_MISSING", "LANG")
	want := map[string]string{
		"LANG":           "C.UTF-8",
		"TZ":             "UTC",
		"PYTHONHASHSEED": "0",
		"VEXL_PROFILE":   "~/profiles/fast.toml",
		"VEXL_CACHE":     "{venv}/cache",
		"VEXL_TOKEN":     Redacted,
		"VEXL_PEER":      Redacted,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Env =\n%v\nwant\n%v", got, want)
	}
	if len(env) != 13 || env["HOME"] != "/home/alice" {
		t.Error("Env modified its argument")
	}
	// Nothing private is left: the Scanner finds nothing in the record.
	s := p.Scanner()
	for k, v := range got {
		if fs := s.scanString(k + "=" + v); len(fs) != 0 {
			t.Errorf("%s=%s still holds %v", k, v, fs)
		}
	}
}

// TestRoundTrip sanitises what mkrelease records (commands, messages,
// environment facts) and scans the result: nothing private is left.
func TestRoundTrip(t *testing.T) {
	p := testPrivate()
	s := p.Scanner()
	for _, in := range []string{
		"/tmp/mk-1/venv/bin/python -m vexl.verify --cases /srv/scratch/mk-1/cases.jsonl",
		"pip install --no-index --find-links file:///tmp/mk-1/bundle/wheels vexl==0.3.0",
		"FileNotFoundError: [Errno 2] No such file or directory: '/home/alice/.cache/vexl/kernels.bin'",
		"worker on alice-mbp.local (pid 123) wrote /tmp/pytest-of-alice/pytest-0/x",
		"/mnt/shared/alice/datasets and C:\\Users\\alice\\AppData\\Local\\Temp\\x",
		"TMPDIR=/tmp HOME=/home/alice USER=alice HOSTNAME=alice-mbp",
	} {
		out := p.String(in)
		if fs := s.scanString(out); len(fs) != 0 {
			t.Errorf("String(%q) = %q, still holding %v", in, out, fs)
		}
		for _, private := range []string{"alice", "/tmp/"} {
			if strings.Contains(out, private) {
				t.Errorf("String(%q) = %q, still holding %q", in, out, private)
			}
		}
	}
}

func TestFromSystem(t *testing.T) {
	p := FromSystem()
	if p.Temp != os.TempDir() {
		t.Errorf("Temp = %q, want %q", p.Temp, os.TempDir())
	}
	if h, err := os.UserHomeDir(); err == nil && p.Home != h {
		t.Errorf("Home = %q, want %q", p.Home, h)
	}
	if h, err := os.Hostname(); err == nil && p.Host != h {
		t.Errorf("Host = %q, want %q", p.Host, h)
	}
	if p.User == "" {
		t.Log("no user name could be read")
	}
	if len(p.Folders) != 0 {
		t.Errorf("Folders = %v, want none", p.Folders)
	}
	// The real temporary folder of this machine is recorded as {tmp}.
	dir := t.TempDir()
	rel, err := filepath.Rel(filepath.Clean(os.TempDir()), dir)
	if err != nil || strings.HasPrefix(rel, "..") {
		t.Skipf("t.TempDir %s is not under os.TempDir", dir)
	}
	if got, want := p.String(dir), "{tmp}/"+filepath.ToSlash(rel); got != want {
		t.Errorf("String(%q) = %q, want %q", dir, got, want)
	}
}

// String replaces a private value where the Scanner finds it once the text
// is normalised, replacing the bytes it was decoded from.
func TestPrivateStringNormalised(t *testing.T) {
	p := testPrivate()
	s := p.Scanner()
	for _, c := range []struct{ in, want string }{
		{`ran on \u0061lice-mbp.local`, "ran on {host}.local"},
		{"ran on alice\u200b-mbp", "ran on {host}"},
		{"ran on ａｌｉｃｅ－ｍｂｐ today", "ran on {host} today"},
		{`read \/home\/alice\/.netrc`, `read ~\/.netrc`},
		{`x\nalice-mbp`, `x\n{host}`},
		{"cd %2Fsrv%2Fscratch%2Fmk-1%2Fx", "cd {work}%2Fx"},
		{`C:\\Users\\alice\\x`, `C:\\Users\\{user}\\x`},
		{"/tmp/mk-1/\u200bvenv/bin", "{venv}/bin"},
		// Nothing private: left as it is.
		{`a \"quoted\" message, 50% \u00e9 &amp; ｆｕｌｌ`, `a \"quoted\" message, 50% \u00e9 &amp; ｆｕｌｌ`},
	} {
		got := p.String(c.in)
		if got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := p.String(got); again != got {
			t.Errorf("String(%q) = %q, then %q: not idempotent", c.in, got, again)
		}
		for _, f := range s.scanString(got) {
			t.Errorf("String(%q) = %q still holds %v", c.in, got, f)
		}
	}
}
