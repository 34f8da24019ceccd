package bundle

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
)

func TestCleanEnv(t *testing.T) {
	for _, tc := range []struct {
		in, want []string
	}{
		{[]string{"PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8"}, []string{"PATH=/usr/bin", "HOME=/root", "LANG=C.UTF-8"}},
		{[]string{"PIP_FIND_LINKS=/tmp/evil", "PIP_INDEX_URL=http://evil", "PIP_EXTRA_INDEX_URL=http://evil", "PIP_REQUIREMENT=/tmp/r.txt",
			"PIP_CONSTRAINT=/tmp/c.txt", "PIP_CONFIG_FILE=/tmp/pip.conf", "PIP_TARGET=/tmp/t", "PIP_USER=1", "PIP_NO_INDEX=0", "PATH=/bin"}, []string{"PATH=/bin"}},
		{[]string{"PYTHONPATH=/tmp/evil", "PYTHONHOME=/tmp/evil", "PYTHONSTARTUP=/tmp/s.py", "PYTHONUSERBASE=/tmp/u", "PYTHONSAFEPATH=", "PYTHON=/x", "HOME=/h"}, []string{"HOME=/h"}},
		{[]string{"VIRTUAL_ENV=/opt/other", "__PYVENV_LAUNCHER__=/x", "VIRTUAL_ENV_PROMPT=(x)"}, []string{"VIRTUAL_ENV_PROMPT=(x)"}},
		{[]string{"pip_find_links=/tmp/evil", "Python_Path=/x", "Virtual_Env=/x"}, nil},
		{[]string{"XPIP_FIND_LINKS=1", "MYPYTHONPATH=1", "PIPX_HOME=/p"}, []string{"XPIP_FIND_LINKS=1", "MYPYTHONPATH=1", "PIPX_HOME=/p"}},
		{[]string{"=C:=C:\\", "PIP_=1"}, []string{"=C:=C:\\"}},
	} {
		if got := CleanEnv(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("CleanEnv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestInstallRefuses checks the refusals Install makes before it runs an
// interpreter: each names the reason and creates no virtualenv.
func TestInstallRefuses(t *testing.T) {
	tag, other := hostPlatformTag()
	if tag == "" {
		t.Skip("no platform tag known for this machine")
	}
	reqs := []byte("x\n")
	opened := func(t *testing.T, tag string) *Opened {
		root := t.TempDir()
		os.WriteFile(filepath.Join(root, "requirements.txt"), reqs, 0o644)
		return &Opened{Root: root, requirements: checksum.Bytes(reqs),
			Manifest: &dist.Manifest{Bundle: &dist.ManifestBundle{Target: "t1", PlatformTag: tag, Pythons: []string{"3.99"}}}}
	}
	cases := []struct {
		name   string
		opened func(t *testing.T) *Opened
		venv   func(t *testing.T, dir string)
		want   string
	}{
		{"checks not passed", func(t *testing.T) *Opened { o := opened(t, tag); o.requirements = ""; return o }, nil,
			"the bundle has not passed its checks: nothing installed"},
		{"no manifest", func(t *testing.T) *Opened { o := opened(t, tag); o.Manifest = nil; return o }, nil,
			"the bundle has not passed its checks"},
		{"another platform", func(t *testing.T) *Opened { return opened(t, other) }, nil,
			"the bundle is for t1 (" + other + "); this machine is "},
		{"requirements.txt changed after the checks", func(t *testing.T) *Opened {
			o := opened(t, tag)
			os.WriteFile(filepath.Join(o.Root, "requirements.txt"), []byte("x\n--find-links /tmp/outside\n"), 0o644)
			return o
		}, nil, "requirements.txt changed after the bundle was checked: nothing installed"},
		{"no supported interpreter", func(t *testing.T) *Opened { return opened(t, tag) }, nil,
			"no supported Python found (the bundle supports CPython 3.99)"},
		{"a folder that is no virtualenv", func(t *testing.T) *Opened { return opened(t, tag) },
			func(t *testing.T, dir string) { os.MkdirAll(filepath.Join(dir, "keep"), 0o755) }, "exists and is not a virtualenv"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			venv := filepath.Join(t.TempDir(), "venv")
			if tc.venv != nil {
				tc.venv(t, venv)
			}
			_, err := Install(context.Background(), tc.opened(t), InstallOptions{Venv: venv, Getenv: func(string) string { return "" }})
			var ie *InstallError
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Install: %v, want %q", err, tc.want)
			}
			if !errors.As(err, &ie) || ie.ExitCode() != 1 {
				t.Errorf("Install: %T, want an *InstallError (exit 1)", err)
			}
			_, statErr := os.Stat(venv)
			if tc.venv == nil && statErr == nil {
				t.Errorf("a refused install created %s", venv)
			}
			if tc.venv != nil {
				if _, err := os.Stat(filepath.Join(venv, "keep")); err != nil {
					t.Errorf("a refused install touched %s: %v", venv, err)
				}
			}
		})
	}
}

// TestProtectedReason: a virtualenv left by an interrupted install is never
// removed when it is a file system root or is, or holds, a protected
// folder (the home folder); a folder beside or below one is removable.
func TestProtectedReason(t *testing.T) {
	root := t.TempDir()
	for filepath.Dir(root) != root {
		root = filepath.Dir(root)
	}
	home := filepath.Join(root, "home", "u")
	for _, tc := range []struct {
		real string
		want string
	}{
		{root, "it is the root of a file system"},
		{home, "it is (or holds) " + home},
		{filepath.Join(root, "home"), "it is (or holds) " + home},
		{filepath.Join(home, "venv"), ""},
		{filepath.Join(root, "home", "u2"), ""},
		{filepath.Join(root, "home", "u.."), ""},
	} {
		if got := protectedReason(tc.real, []string{home}); got != tc.want {
			t.Errorf("protectedReason(%q) = %q, want %q", tc.real, got, tc.want)
		}
	}
}
