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
	"github.com/mkrelease/mkrelease/internal/pyfind"
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
	// Checksums, Notes and Manifest are the names of the bundle's
	// SHA256SUMS, release notes and manifest; SBOM and CycloneDX those of
	// its target's SPDX and CycloneDX documents.
	Checksums, Notes, Manifest, SBOM, CycloneDX string
	// Minors are the boundary's minor versions, newest first ("13", "12").
	Minors []string
	// Candidates is install.sh's candidates function, NamesCase the case
	// pattern of an interpreter's name, PathNames and Managers say in
	// words where it looks: all from the rules of `mkrelease install` for
	// the target's system (internal/pyfind), so the two find the same.
	Candidates, NamesCase, PathNames string
	Managers                         []string
	// ManagerFolders say where each manager's interpreters are, e.g.
	// "`$PYENV_ROOT` (default `$HOME/.pyenv`) `/versions/*/bin/python3.[0-9]*`".
	ManagerFolders []string
	// ProbeSeconds bounds one run of an interpreter to ask its version.
	ProbeSeconds int
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
#           CPython {{join .Pythons ", "}} that runs, found as ` + "`mkrelease install`" + ` finds
#           one: on PATH, then under {{join .Managers " or "}})
#
# It takes nothing from outside the bundle: PIP_*, PYTHON* and VIRTUAL_ENV are
# dropped from the environment, pip reads no configuration file, and pip runs
# only on the requirements.txt this script was written with. It checks the
# platform and the interpreter before it creates a virtualenv, and removes a
# virtualenv it created when the install fails.
#
# Needs only sh and its POSIX tools, sha256sum or shasum, and Python's venv and pip.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
venv=${1:-"$here/../{{.Name}}-venv"}
python=${2:-${PYTHON:-}}
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
# boundary_minor prints X when the interpreter $1 runs as CPython 3.X of the
# support boundary, and fails for anything else, one that does not start
# included; it is stopped after {{.ProbeSeconds}} s where timeout(1) is there.
boundary_minor() {
	if command -v timeout >/dev/null 2>&1; then set -- timeout {{.ProbeSeconds}} "$1"; else set -- "$1"; fi
	m=$("$@" -I -c 'import sys; ok = sys.implementation.name == "cpython" and sys.version_info[:2] in [{{range $i, $p := .Pythons}}{{if $i}}, {{end}}{{tuple $p}}{{end}}]; ok and print(sys.version_info[1]); sys.exit(0 if ok else 1)' 2>/dev/null) || return 1
	case $m in {{join .Minors "|"}}) printf '%s\n' "$m" ;; *) return 1 ;; esac
}
supported() { boundary_minor "$1" >/dev/null; }
# candidates prints the interpreters to try, one a line, in the order
# ` + "`mkrelease install`" + ` tries them (internal/pyfind): each absolute PATH
# folder in order, and in it the names {{.PathNames}}, in byte order;
# then those of {{join .Managers " and "}}, all together in byte order.
{{.Candidates}}# find_python sets python to the newest supported interpreter, as
# ` + "`mkrelease install`" + ` picks it: every candidate is run, since a version
# manager's shim may exist for a version it cannot start, and of each 3.X
# the first candidate that runs is kept.
find_python() {
	best=
	best_minor=
	tried=0
	seen=$nl
	while IFS= read -r p; do
		case ${p##*/} in {{.NamesCase}}) ;; *) continue ;; esac
		case $p in *-config) continue ;; esac
		case $seen in *"$nl$p$nl"*) continue ;; esac
		seen=$seen$p$nl
		if [ ! -f "$p" ] || [ ! -x "$p" ]; then continue; fi
		tried=$((tried + 1))
		m=$(boundary_minor "$p") || continue
		if [ -z "$best" ] || [ "$m" -gt "$best_minor" ]; then
			best=$p
			best_minor=$m
		fi
	done <<CANDIDATES
$(candidates)
CANDIDATES
	[ -n "$best" ] || return 1
	python=$best
}
vpy=$venv/{{.P.VenvPython}}
if [ -e "$vpy" ]; then
	supported "$vpy" || die "$venv uses a Python that does not run or is outside the support boundary; this bundle supports CPython {{join .Pythons ", "}}: name a new folder"
else
	[ ! -e "$venv" ] || die "$venv exists and is not a virtualenv: name a new folder or an existing virtualenv"
	if [ -n "$python" ]; then
		supported "$python" || die "$python does not run as CPython {{join .Pythons ", "}}: pass a supported interpreter"
	else
		find_python || die "no CPython {{join .Pythons ", "}} that runs was found on PATH or under {{join .Managers " or "}} ($tried interpreters tried): install one, or pass it as the second argument: ./install.sh VENV /path/to/python3.X"
	fi
	created=1
	say "creating the virtualenv $venv with $python"
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
./{{.Root}}/install.sh ./{{.Name}}-venv
` + "```" + `

or, with mkrelease: ` + "`mkrelease install {{.File}} --venv ./{{.Name}}-venv`" + `.

` + "`install.sh [VENV] [PYTHON]`" + ` takes two optional arguments:

| argument | what it is |
| --- | --- |
| ` + "`VENV`" + ` | the virtualenv to create, or to reuse when it exists (default: ` + "`{{.Name}}-venv`" + ` beside the bundle's folder) |
| ` + "`PYTHON`" + ` | the interpreter of a new virtualenv, a path or a command name, e.g. ` + "`./{{.Root}}/install.sh ./{{.Name}}-venv /path/to/python{{index .Pythons 0}}`" + ` (default: ` + "`$PYTHON`" + `, else the newest CPython {{join .Pythons ", "}} that runs, found as ` + "`mkrelease install`" + ` finds one; ` + "`mkrelease install --python`" + ` takes the same) |

Without one, ` + "`install.sh`" + ` looks where ` + "`mkrelease install`" + ` looks, in this order:

1. each folder of ` + "`PATH`" + `, in order: {{.PathNames}};
2. then, together in byte order of their paths, {{join .ManagerFolders "; "}}.

It runs every one it finds, skips one that does not start (a version manager's shim for a version
it cannot run) or is outside the support boundary, and takes the newest version (of one version,
the first found). A folder that is not an absolute path is skipped.

` + "`install.sh`" + ` takes nothing from outside the bundle: it drops ` + "`PIP_*`" + `, ` + "`PYTHON*`" + ` and
` + "`VIRTUAL_ENV`" + ` from the environment and lets pip read no configuration file. It checks the
platform ({{.P.OS}} on {{.P.Arch}}), every file against the sha256 written into it (the digests
` + "`{{.Checksums}}`" + ` lists), that ` + "`wheels/`" + ` and ` + "`dependencies/`" + ` hold no other file, and the interpreter
before it creates the virtualenv (or reuses it), then runs:

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
| ` + "`{{.CycloneDX}}`" + ` | the same bill of materials as CycloneDX 1.6 |
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
	var minors []string
	for _, v := range newest {
		minor, ok := strings.CutPrefix(v, "3.")
		if !ok || minor == "" || strings.Trim(minor, "0123456789") != "" {
			return nil, fmt.Errorf("bundle %s: Python %q: install.sh supports CPython 3.X only", d.Root, v)
		}
		minors = append(minors, minor)
	}
	layout := pyfind.LayoutFor(p.GOOS)
	candidates, err := candidatesSh(layout)
	if err != nil {
		return nil, fmt.Errorf("bundle %s: %w", d.Root, err)
	}
	var managers, folders []string
	for _, m := range layout.Managers {
		managers = append(managers, m.Name)
		folders = append(folders, managerFolder(m))
	}
	var b bytes.Buffer
	data := docsData{Docs: d, P: p,
		Checksums: dist.ChecksumsFile, Notes: dist.NotesFile, Manifest: dist.ManifestFile,
		SBOM: dist.NamesOf(d.Name, d.Version).TargetSBOM(d.Target), CycloneDX: dist.NamesOf(d.Name, d.Version).TargetCycloneDX(d.Target),
		Minors: minors, Candidates: candidates, NamesCase: namesCase(layout),
		PathNames: "`" + strings.Join(layout.OnPath, "`, then `") + "`", Managers: managers, ManagerFolders: folders,
		ProbeSeconds: int(pyfind.ProbeTimeout.Seconds())}
	if err := t.Execute(&b, data); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
