package bundle

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

var sampleDocs = Docs{
	Name: "vexl", Version: "0.3.0", Target: "linux-x86_64", PlatformTag: "manylinux_2_34_x86_64",
	Root: "vexl-0.3.0-linux-x86_64", File: "vexl-0.3.0-linux-x86_64.tar.gz",
	Pythons: []string{"3.11", "3.12", "3.13"},
	Own:     []string{"vexl-compiler==0.3.0", "vexl-plugin==0.3.0"},
	Deps:    []string{"example==21.12"},
}

func TestInstallScript(t *testing.T) {
	b, err := InstallScript(sampleDocs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"#!/bin/sh\n", "sha256sum -c --quiet SHA256SUMS", "shasum -a 256 -c SHA256SUMS",
		"in [(3, 11), (3, 12), (3, 13)]", "for p in python3.11 python3.12 python3.13; do", "if command -v \"$p\" >/dev/null 2>&1 && supported \"$p\"; then python=$p; fi",
		"--no-index", "--require-hashes -r \"$here/requirements.txt\"", "--find-links \"$here/dependencies\"", "pip check",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("install.sh lacks %q", want)
		}
	}
	p := filepath.Join(t.TempDir(), "install.sh")
	os.WriteFile(p, b, 0o755)
	for _, sh := range []string{"sh", "dash", "bash"} {
		if _, err := exec.LookPath(sh); err != nil {
			continue
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s -n install.sh: %v\n%s", sh, err, out)
		}
	}
}

func TestInstallDoc(t *testing.T) {
	b, err := InstallDoc(sampleDocs)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{
		"# Installing vexl 0.3.0 (linux-x86_64)", "| interpreters | CPython 3.11, 3.12, 3.13 |",
		"| dependencies | example==21.12 |", "`manylinux_2_34_x86_64`",
		"sha256sum -c vexl-0.3.0-linux-x86_64.tar.gz.sha256", "tar -xzf vexl-0.3.0-linux-x86_64.tar.gz",
		"./vexl-0.3.0-linux-x86_64/install.sh", "mkrelease install vexl-0.3.0-linux-x86_64.tar.gz",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("INSTALL.md lacks %q", want)
		}
	}
	noDeps := sampleDocs
	noDeps.Deps = nil
	b, _ = InstallDoc(noDeps)
	if !strings.Contains(string(b), "| dependencies | none |") {
		t.Error("INSTALL.md without dependencies does not say none")
	}
	noPy := sampleDocs
	noPy.Pythons = nil
	if _, err := InstallDoc(noPy); err == nil {
		t.Error("rendered without a support boundary")
	}
}
