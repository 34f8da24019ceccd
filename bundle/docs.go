package bundle

import (
	"bytes"
	"fmt"
	"strings"
	"text/template"
)

// Docs are the facts INSTALL.md and install.sh state about one bundle.
type Docs struct {
	Name, Version string
	Target        string
	PlatformTag   string
	// Root is the bundle's top folder; File its archive name.
	Root, File string
	// Pythons is the support boundary ("3.11", ...), oldest first.
	Pythons []string
	// Own are the release's wheels ("name==version"), Deps the closure.
	Own, Deps []string
}

// pyTuple renders "3.11" as "(3, 11)".
func pyTuple(v string) string { return "(" + strings.Replace(v, ".", ", ", 1) + ")" }

var installSh = template.Must(template.New("install.sh").Funcs(template.FuncMap{"tuple": pyTuple, "join": strings.Join}).Parse(`#!/bin/sh
# install.sh: installs {{.Name}} {{.Version}} ({{.Target}}) from this bundle, with no network.
#
# Usage: ./install.sh [VENV] [PYTHON]
#   VENV    virtualenv to create or reuse (default: ./{{.Name}}-venv next to this bundle)
#   PYTHON  interpreter for a new virtualenv (default: $PYTHON, else the newest of
#           python{{join .Pythons " python"}} on PATH)
#
# Needs only sh, sha256sum or shasum, and Python's venv and pip.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-"$here/../{{.Name}}-venv"}
python=${2:-${PYTHON:-}}

say() { printf '%s\n' "install.sh: $*" >&2; }
die() { say "$*"; exit 1; }

# 1. Every file of the bundle against SHA256SUMS.
cd "$here"
if command -v sha256sum >/dev/null 2>&1; then
	sha256sum -c --quiet SHA256SUMS || die "SHA256SUMS does not match: the bundle is damaged; fetch it again and check its .sha256"
elif command -v shasum >/dev/null 2>&1; then
	shasum -a 256 -c SHA256SUMS >/dev/null || die "SHA256SUMS does not match: the bundle is damaged; fetch it again and check its .sha256"
else
	die "need sha256sum (coreutils) or shasum (perl) to check the bundle"
fi

# 2. An interpreter inside the support boundary: CPython {{join .Pythons ", "}}.
supported() {
	"$1" -c 'import sys; sys.exit(0 if sys.implementation.name == "cpython" and sys.version_info[:2] in [{{range $i, $p := .Pythons}}{{if $i}}, {{end}}{{tuple $p}}{{end}}] else 1)' 2>/dev/null
}
if [ -x "$venv/bin/python" ]; then
	supported "$venv/bin/python" || die "$venv uses an unsupported Python; this bundle supports CPython {{join .Pythons ", "}}"
else
	if [ -z "$python" ]; then
		# The newest that runs: version-manager shims may exist for
		# versions they cannot start.
		for p in{{range .Pythons}} python{{.}}{{end}}; do
			if command -v "$p" >/dev/null 2>&1 && supported "$p"; then python=$p; fi
		done
	fi
	[ -n "$python" ] || die "no CPython {{join .Pythons ", "}} found on PATH; pass one: ./install.sh VENV /path/to/python3.X"
	supported "$python" || die "$python is not a supported interpreter; this bundle supports CPython {{join .Pythons ", "}}"
	"$python" -m venv "$venv" || die "could not create the virtualenv $venv"
fi

# 3. The exact wheels, offline, every one checked against its pinned hash.
"$venv/bin/python" -m pip install --no-index --no-cache-dir --disable-pip-version-check \
	--find-links "$here/wheels" --find-links "$here/dependencies" \
	--require-hashes -r "$here/requirements.txt" || die "pip could not install the bundle"
"$venv/bin/python" -m pip check --disable-pip-version-check || die "pip check found broken requirements"
say "installed {{.Name}} {{.Version}} into $venv:"
"$venv/bin/python" -m pip list --disable-pip-version-check --format=freeze
`))

var installMd = template.Must(template.New("INSTALL.md").Funcs(template.FuncMap{"join": strings.Join}).Parse(`# Installing {{.Name}} {{.Version}} ({{.Target}})

This bundle installs {{.Name}} {{.Version}} with no network: it holds the exact wheels of the
release and of every runtime dependency, each pinned by its sha256.

## Supported configuration (the support boundary)

| | |
| --- | --- |
| platform | {{.Target}} (wheel tag ` + "`{{.PlatformTag}}`" + `) |
| interpreters | CPython {{join .Pythons ", "}} |
| release wheels | {{join .Own ", "}} |
| dependencies | {{if .Deps}}{{join .Deps ", "}}{{else}}none{{end}} |

Anything outside this table is not supported by this bundle.

## Install

Check the download, extract it, and run the installer:

` + "```sh" + `
sha256sum -c {{.File}}.sha256        # or: shasum -a 256 -c {{.File}}.sha256
tar -xzf {{.File}}
./{{.Root}}/install.sh ./{{.Name}}-venv      # optional second argument: the python3.X to use
` + "```" + `

or, with mkrelease: ` + "`mkrelease install {{.File}} --venv ./{{.Name}}-venv`" + `.

` + "`install.sh`" + ` checks every file against ` + "`SHA256SUMS`" + `, creates the virtualenv (or reuses it),
and runs:

` + "```sh" + `
VENV/bin/python -m pip install --no-index --find-links wheels --find-links dependencies \
    --require-hashes -r requirements.txt
VENV/bin/python -m pip check
` + "```" + `

## Contents

| path | what it is |
| --- | --- |
| ` + "`wheels/`" + ` | the release's wheels |
| ` + "`dependencies/`" + ` | the dependency closure for this target |
| ` + "`requirements.txt`" + ` | every wheel of the bundle, pinned with ` + "`--hash`" + ` (pip hash-checking mode) |
| ` + "`pylock.toml`" + ` | the same set as a PEP 751 lock with relative paths |
| ` + "`licenses/`" + ` | one file per component, and ` + "`THIRD_PARTY_LICENSES.txt`" + ` |
| ` + "`RELEASE_NOTES.md`" + ` | what changed in {{.Version}} |
| ` + "`manifest.json`" + ` | every build input and this support boundary |
| ` + "`{{.Name}}-{{.Version}}.spdx.json`" + ` | the SPDX 2.3 software bill of materials |
| ` + "`SHA256SUMS`" + ` | the sha256 of every other file |
`))

// InstallScript renders install.sh.
func InstallScript(d Docs) ([]byte, error) { return render(installSh, d) }

// InstallDoc renders INSTALL.md.
func InstallDoc(d Docs) ([]byte, error) { return render(installMd, d) }

func render(t *template.Template, d Docs) ([]byte, error) {
	if len(d.Pythons) == 0 {
		return nil, fmt.Errorf("bundle %s: no supported Python versions: set [bundle] pythons", d.Root)
	}
	var b bytes.Buffer
	if err := t.Execute(&b, d); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
