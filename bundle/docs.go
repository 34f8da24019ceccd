package bundle

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/mkrelease/mkrelease/internal/checksum"
	"github.com/mkrelease/mkrelease/internal/dist"
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
	// Files are every file of the bundle but install.sh and SHA256SUMS,
	// with their digests (what SHA256SUMS lists for them): install.sh
	// carries them and checks the bundle against them, so it runs pip on
	// no requirements.txt and no wheel but those it was written with.
	Files []checksum.Sum
}

// docsData is what the templates see: the facts and what install.sh
// checks the machine against.
type docsData struct {
	Docs
	P platformFacts
	// Newest is the support boundary, newest first (install.sh's order
	// of preference).
	Newest []string
	// Checksums, Notes and Manifest are the names of the bundle's
	// SHA256SUMS, release notes and manifest; SBOM that of its target's
	// SPDX document.
	Checksums, Notes, Manifest, SBOM string
}

var (
	// scriptNameRE is the form of the names install.sh carries; digestRE
	// that of their digests.
	scriptNameRE = regexp.MustCompile(`^[A-Za-z0-9._+][A-Za-z0-9._+/-]*$`)
	digestRE     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// pyTuple renders "3.11" as "(3, 11)".
func pyTuple(v string) string { return "(" + strings.Replace(v, ".", ", ", 1) + ")" }

var installSh = template.Must(template.New("install.sh").Funcs(template.FuncMap{"tuple": pyTuple, "join": strings.Join}).Parse(`#!/bin/sh
# install.sh: installs {{.Name}} {{.Version}} ({{.Target}}) from this bundle, with no network.
#
# Usage: ./install.sh [VENV] [PYTHON]
#   VENV    virtualenv to create or reuse (default: ./{{.Name}}-venv next to this bundle)
#   PYTHON  interpreter for a new virtualenv (default: $PYTHON, else the newest
#           CPython {{join .Pythons ", "}} that runs, found on PATH or under pyenv or uv)
#
# It takes nothing from outside the bundle: PIP_*, PYTHON* and VIRTUAL_ENV are
# dropped from the environment, pip reads no configuration file, and pip runs
# only on the requirements.txt this script was written with. It checks the
# platform and the interpreter before it creates a virtualenv, and removes a
# virtualenv it created when the install fails.
#
# Needs only sh, uname, sha256sum or shasum, and Python's venv and pip.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-"$here/../{{.Name}}-venv"}
python=${2:-${PYTHON:-}}
home=${HOME:-}
created=
case $venv in /*) ;; *) venv=$(pwd)/$venv ;; esac
case $python in /*) ;; */*) python=$(pwd)/$python ;; esac

say() { printf '%s\n' "install.sh: $*" >&2; }
die() { say "$*"; exit 1; }
cleanup() {
	status=$?
	trap - EXIT
	if [ "$status" -ne 0 ] && [ -n "$created" ]; then
		rm -rf -- "$venv"
		say "removed the virtualenv $venv it had created"
	fi
	exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# 1. Nothing from the environment: pip's and Python's settings are dropped,
#    and pip reads no configuration file.
for name in $(env | sed -n -e 's/^\(PIP_[A-Za-z0-9_]*\)=.*/\1/p' -e 's/^\(PYTHON[A-Za-z0-9_]*\)=.*/\1/p' \
	-e 's/^\(VIRTUAL_ENV\)=.*/\1/p' -e 's/^\(__PYVENV_LAUNCHER__\)=.*/\1/p'); do
	unset "$name" || die "cannot unset $name: run install.sh from an environment without it"
done
PIP_CONFIG_FILE=/dev/null
export PIP_CONFIG_FILE

# 2. The platform: {{.Target}} ({{.PlatformTag}}), that is {{.P.OS}} on {{.P.Arch}}.
os=$(uname -s 2>/dev/null || true)
arch=$(uname -m 2>/dev/null || true)
platform_ok=
case $os in
{{.P.OSCase}})
	case $arch in
	{{.P.ArchCase}}) platform_ok=1 ;;
	esac
	;;
esac
[ -n "$platform_ok" ] || die "this bundle is for {{.Target}} ({{.P.OS}} on {{.P.Arch}}); this machine is ${os:-unknown} on ${arch:-unknown}: fetch the bundle built for this platform"

# 3. Every file of the bundle is the one it was built with: the digests are
#    written into this script (SHA256SUMS lists the same), and wheels/ and
#    dependencies/, where pip looks, hold no other file.
cd "$here"
if command -v sha256sum >/dev/null 2>&1; then
	sha256() { sha256sum "$1" | cut -d ' ' -f 1; }
elif command -v shasum >/dev/null 2>&1; then
	sha256() { shasum -a 256 "$1" | cut -d ' ' -f 1; }
else
	die "need sha256sum (coreutils) or shasum (perl) to check the bundle"
fi
nl='
'
names=$nl
while read -r sum name; do
	got=
	if [ -f "$name" ] && [ ! -h "$name" ]; then got=$(sha256 "$name"); fi
	[ "$got" = "$sum" ] || die "$name is not the file this bundle was built with (sha256 ${got:-missing}, want $sum): the bundle is damaged or was tampered with; fetch it again and check its .sha256"
	names=$names$name$nl
done <<'EOF'
{{range .Files}}{{.SHA256}}  {{.Name}}
{{end}}EOF
odd=$(find wheels dependencies -name '*[!A-Za-z0-9._+-]*' -print | sed -n 1p)
[ -z "$odd" ] || die "$odd: a file name mkrelease never writes; the bundle was tampered with: fetch it again"
# shellcheck disable=SC2044 # the names were checked above: no spaces, no patterns
for f in $(find wheels dependencies ! -type d -print); do
	case $names in
	*"$nl$f$nl"*) ;;
	*) die "$f is not a file of this bundle: it was added after the build, and pip would see it; fetch the bundle again" ;;
	esac
done

# 4. An interpreter inside the support boundary, CPython {{join .Pythons ", "}}, that runs.
supported() {
	"$1" -I -c 'import sys; sys.exit(0 if sys.implementation.name == "cpython" and sys.version_info[:2] in [{{range $i, $p := .Pythons}}{{if $i}}, {{end}}{{tuple $p}}{{end}}] else 1)' >/dev/null 2>&1
}
# find_python sets python to the newest supported interpreter that runs, from
# PATH, then pyenv's and uv's folders: a version manager's shim may exist for
# a version it cannot start, so every candidate is run.
find_python() {
	set -f
	saved_ifs=$IFS
	IFS=:
	# shellcheck disable=SC2086 # PATH is split at its colons
	set -- ${PATH:-}
	IFS=$saved_ifs
	set +f
	for v in{{range .Newest}} {{.}}{{end}}; do
		for d in "$@" "${PYENV_ROOT:-$home/.pyenv}"/versions/*/bin "$home"/.local/share/uv/python/*/bin; do
			case $d in /*) ;; *) continue ;; esac
			p=$d/python$v
			if [ -f "$p" ] && [ -x "$p" ] && supported "$p"; then
				python=$p
				return 0
			fi
		done
	done
	return 1
}
vpy=$venv/{{.P.VenvPython}}
if [ -e "$vpy" ]; then
	supported "$vpy" || die "$venv uses a Python that does not run or is outside the support boundary; this bundle supports CPython {{join .Pythons ", "}}: name a new folder"
else
	[ ! -e "$venv" ] || die "$venv exists and is not a virtualenv: name a new folder or an existing virtualenv"
	if [ -n "$python" ]; then
		supported "$python" || die "$python does not run as CPython {{join .Pythons ", "}}: pass a supported interpreter"
	else
		find_python || die "no CPython {{join .Pythons ", "}} that runs was found on PATH or under pyenv or uv: install one, or pass it: ./install.sh VENV /path/to/python3.X"
	fi
	created=1
	"$python" -I -m venv "$venv" || die "could not create the virtualenv $venv with $python"
	supported "$vpy" || die "the new virtualenv $venv has no working Python"
fi

# 5. The exact wheels, offline, every one checked against its pinned hash.
pip() {
	"$vpy" -I -m pip --isolated --disable-pip-version-check --no-input "$@"
}
pip install --no-index --no-cache-dir --only-binary :all: \
	--find-links "$here/wheels" --find-links "$here/dependencies" \
	--require-hashes -r "$here/requirements.txt" || die "pip could not install the bundle"
pip check || die "pip check found broken requirements"
created=
say "installed {{.Name}} {{.Version}} into $venv:"
pip list --format=freeze
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

` + "`install.sh`" + ` takes nothing from outside the bundle: it drops ` + "`PIP_*`" + `, ` + "`PYTHON*`" + ` and
` + "`VIRTUAL_ENV`" + ` from the environment and lets pip read no configuration file. It checks the
platform ({{.P.OS}} on {{.P.Arch}}), every file against the sha256 written into it (the digests
` + "`{{.Checksums}}`" + ` lists), that ` + "`wheels/`" + ` and ` + "`dependencies/`" + ` hold no other file, and picks a supported
CPython that runs (PATH, then pyenv and uv) before it creates the virtualenv (or reuses it), then
runs:

` + "```sh" + `
VENV/{{.P.VenvPython}} -I -m pip --isolated install --no-index --only-binary :all: \
    --find-links wheels --find-links dependencies --require-hashes -r requirements.txt
VENV/{{.P.VenvPython}} -I -m pip --isolated check
` + "```" + `

A virtualenv it created is removed again when the install fails. ` + "`mkrelease install`" + ` does the
same, and also refuses a ` + "`requirements.txt`" + ` or ` + "`pylock.toml`" + ` that is not exactly what mkrelease
writes for the bundle's wheels.

## Contents

| path | what it is |
| --- | --- |
| ` + "`wheels/`" + ` | the release's wheels |
| ` + "`dependencies/`" + ` | the dependency closure for this target |
| ` + "`requirements.txt`" + ` | every wheel of the bundle, pinned with ` + "`--hash`" + ` (pip hash-checking mode) |
| ` + "`pylock.toml`" + ` | the same set as a PEP 751 lock with relative paths |
| ` + "`licenses/`" + ` | one file per component, and ` + "`THIRD_PARTY_LICENSES.txt`" + ` |
| ` + "`{{.Notes}}`" + ` | what changed in {{.Version}} |
| ` + "`{{.Manifest}}`" + ` | every build input and this support boundary |
| ` + "`{{.SBOM}}`" + ` | the SPDX 2.3 software bill of materials of this target: its wheels, the closure and what built them |
| ` + "`{{.Checksums}}`" + ` | the sha256 of every other file |
`))

// InstallScript renders install.sh.
func InstallScript(d Docs) ([]byte, error) { return render(installSh, d) }

// InstallDoc renders INSTALL.md.
func InstallDoc(d Docs) ([]byte, error) { return render(installMd, d) }

func render(t *template.Template, d Docs) ([]byte, error) {
	if len(d.Pythons) == 0 {
		return nil, fmt.Errorf("bundle %s: no supported Python versions: set [bundle] pythons", d.Root)
	}
	p, err := scriptPlatform(d.PlatformTag)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", d.Root, err)
	}
	for _, f := range d.Files {
		if !scriptNameRE.MatchString(f.Name) || !digestRE.MatchString(f.SHA256) || f.Name == "EOF" {
			return nil, fmt.Errorf("bundle %s: file %q (sha256 %q) cannot be written into install.sh: names are letters, digits and . _ + - /, digests 64 lower-case hex digits", d.Root, f.Name, f.SHA256)
		}
	}
	d.Files = slices.Clone(d.Files)
	slices.SortFunc(d.Files, func(a, b checksum.Sum) int { return strings.Compare(a.Name, b.Name) })
	newest := slices.Clone(d.Pythons)
	slices.Reverse(newest)
	var b bytes.Buffer
	data := docsData{Docs: d, P: p, Newest: newest,
		Checksums: dist.ChecksumsFile, Notes: dist.NotesFile, Manifest: dist.ManifestFile,
		SBOM: dist.NamesOf(d.Name, d.Version).TargetSBOM(d.Target)}
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
