package bundle

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pyfind"
)

var (
	// shPatternRE is the form of the patterns and folders of a layout that
	// install.sh writes unquoted (so that the shell expands them): no
	// white space, quote, $, backquote or backslash.
	shPatternRE = regexp.MustCompile(`^[A-Za-z0-9._/*\[\]-]+$`)
	// shVarRE is the form of an environment variable's name.
	shVarRE = regexp.MustCompile(`^[A-Z_][A-Z0-9_]*$`)
)

// candidatesSh writes the sh function candidates of install.sh: it prints,
// one a line, the interpreters `mkrelease install` would try on a machine
// of layout l, in its order (internal/pyfind): each absolute PATH folder in
// order, and in it the names each OnPath pattern matches, pattern by
// pattern, in byte order; then every manager's interpreters together, in
// byte order. A folder that is not absolute is skipped. On Windows (a
// layout with an ExeSuffix) the managers' variables hold Windows paths,
// which cygpath (Git for Windows, MSYS2, Cygwin) turns into the shell's.
//
// A pattern that matches nothing is printed as it is, as sh leaves it;
// install.sh skips a path whose name matches none of the layout's
// patterns ([namesCase]), so such a line is never run.
func candidatesSh(l pyfind.Layout) (string, error) {
	var b strings.Builder
	b.WriteString(`candidates() {
	set -f
	saved_ifs=$IFS
	IFS=:
	# shellcheck disable=SC2086 # PATH is split at its colons
	set -- ${PATH:-}
	IFS=$saved_ifs
	set +f
	for d in "$@"; do
		case $d in /*) ;; *) continue ;; esac
`)
	for _, pat := range l.OnPath {
		if !shPatternRE.MatchString(pat) || strings.Contains(pat, "/") {
			return "", fmt.Errorf("install.sh cannot search PATH for %q", pat)
		}
		fmt.Fprintf(&b, "\t\tprintf '%%s\\n' \"$d\"/%s | LC_ALL=C sort\n", pat)
	}
	b.WriteString("\tdone\n\t{\n")
	for _, m := range l.Managers {
		if !shPatternRE.MatchString(m.Glob) || (m.Default != "" && !shPatternRE.MatchString(m.Default)) ||
			(m.RootEnv != "" && !shVarRE.MatchString(m.RootEnv)) || (m.HomeEnv != "" && !shVarRE.MatchString(m.HomeEnv)) {
			return "", fmt.Errorf("install.sh cannot search the folders of %s (%+v)", m.Name, m)
		}
		native := func(v string) string { return `"${` + v + `}"` }
		if l.ExeSuffix != "" {
			native = func(v string) string { return `"$(shell_path "${` + v + `}")"` }
		}
		fmt.Fprintf(&b, "\t\t# %s\n\t\troot=\n", m.Name)
		if m.RootEnv != "" {
			fmt.Fprintf(&b, "\t\t[ -z \"${%s:-}\" ] || root=%s\n", m.RootEnv, native(m.RootEnv))
		}
		if m.HomeEnv != "" {
			unset := ""
			if m.RootEnv != "" {
				unset = `[ -n "$root" ] || `
			}
			fmt.Fprintf(&b, "\t\t%s[ -z \"${%s:-}\" ] || root=%s/%s\n", unset, m.HomeEnv, native(m.HomeEnv), m.Default)
		}
		fmt.Fprintf(&b, "\t\tcase $root in /*) printf '%%s\\n' \"$root\"/%s ;; esac\n", m.Glob)
	}
	b.WriteString("\t} | LC_ALL=C sort\n}\n")
	if l.ExeSuffix != "" {
		b.WriteString(`# shell_path turns a Windows path (C:\Users\me) into the shell's (/c/Users/me).
shell_path() {
	if command -v cygpath >/dev/null 2>&1; then cygpath -u "$1"; else printf '%s\n' "$1"; fi
}
`)
	}
	return b.String(), nil
}

// namesCase is the case pattern of the names an interpreter of layout l
// may have: those of its PATH patterns and of its managers' globs.
func namesCase(l pyfind.Layout) string {
	var names []string
	add := func(p string) {
		for _, n := range names {
			if n == p {
				return
			}
		}
		names = append(names, p)
	}
	for _, p := range l.OnPath {
		add(p)
	}
	for _, m := range l.Managers {
		add(path.Base(m.Glob))
	}
	return strings.Join(names, "|")
}

// managerFolder says in Markdown where m's interpreters are:
// "pyenv's `$PYENV_ROOT/versions/*/bin/python3.[0-9]*` (`$PYENV_ROOT`
// default `$HOME/.pyenv`)".
func managerFolder(m pyfind.Manager) string {
	home := "$" + m.HomeEnv + "/" + m.Default
	if m.RootEnv == "" {
		return m.Name + "'s `" + home + "/" + m.Glob + "`"
	}
	return m.Name + "'s `$" + m.RootEnv + "/" + m.Glob + "` (`$" + m.RootEnv + "` default `" + home + "`)"
}
