package pep440

import (
	"errors"
	"regexp"
	"strings"
	"testing"
)

// grammar is an independent oracle for Parse: the specification's
// permissive grammar written as a Go regular expression (whose submatches
// follow the same leftmost-first preferences as a backtracking engine),
// plus a separate normaliser working on the submatches.
type grammar struct {
	re        *regexp.Regexp
	canonical *regexp.Regexp
}

// ci spells an ASCII word case-insensitively without (?i), which in Go would
// also match non-ASCII case variants such as U+212A KELVIN SIGN.
func ci(word string) string {
	var b strings.Builder
	for _, r := range word {
		b.WriteString("[" + string(r) + strings.ToUpper(string(r)) + "]")
	}
	return b.String()
}

func alt(words ...string) string {
	for i, w := range words {
		words[i] = ci(w)
	}
	return "(?:" + strings.Join(words, "|") + ")"
}

func newGrammar() grammar {
	const sep = `[-_.]`
	pattern := `^` + ci("v") + `?` +
		`(?:(?P<epoch>[0-9]+)!)?` +
		`(?P<release>[0-9]+(?:\.[0-9]+)*)` +
		`(?:` + sep + `?(?P<prel>` + alt("alpha", "a", "beta", "b", "preview", "pre", "c", "rc") + `)` +
		sep + `?(?P<pren>[0-9]+)?)?` +
		`(?:-(?P<postn1>[0-9]+)|` + sep + `?(?P<postl>` + alt("post", "rev", "r") + `)` +
		sep + `?(?P<postn2>[0-9]+)?)?` +
		`(?:` + sep + `?(?P<devl>` + ci("dev") + `)` + sep + `?(?P<devn>[0-9]+)?)?` +
		`(?:\+(?P<local>[a-zA-Z0-9]+(?:` + sep + `[a-zA-Z0-9]+)*))?$`
	const n = `(?:0|[1-9][0-9]*)`
	canonical := `^(?:[1-9][0-9]*!)?` + n + `(?:\.` + n + `)*(?:(?:a|b|rc)` + n + `)?(?:\.post` + n + `)?(?:\.dev` + n + `)?` +
		`(?:\+[a-z0-9]+(?:\.[a-z0-9]+)*)?$`
	return grammar{re: regexp.MustCompile(pattern), canonical: regexp.MustCompile(canonical)}
}

func stripZeros(s string) string {
	if s = strings.TrimLeft(s, "0"); s == "" {
		return "0"
	}
	return s
}

// normalize returns the normalised form of s, or false if s is invalid.
func (g grammar) normalize(s string) (string, bool) {
	m := g.re.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return "", false
	}
	get := func(name string) string { return m[g.re.SubexpIndex(name)] }
	var b strings.Builder
	if e := get("epoch"); e != "" && stripZeros(e) != "0" {
		b.WriteString(stripZeros(e) + "!")
	}
	for i, r := range strings.Split(get("release"), ".") {
		if i > 0 {
			b.WriteString(".")
		}
		b.WriteString(stripZeros(r))
	}
	if l := strings.ToLower(get("prel")); l != "" {
		b.WriteString(map[string]string{"alpha": "a", "a": "a", "beta": "b", "b": "b"}[l])
		if l != "alpha" && l != "a" && l != "beta" && l != "b" {
			b.WriteString("rc")
		}
		b.WriteString(stripZeros(get("pren")))
	}
	if n1, l := get("postn1"), get("postl"); n1 != "" || l != "" {
		b.WriteString(".post" + stripZeros(n1+get("postn2")))
	}
	if get("devl") != "" {
		b.WriteString(".dev" + stripZeros(get("devn")))
	}
	if l := get("local"); l != "" {
		segs := strings.FieldsFunc(strings.ToLower(l), func(r rune) bool { return r == '.' || r == '-' || r == '_' })
		for i, seg := range segs {
			if strings.Trim(seg, "0123456789") == "" {
				segs[i] = stripZeros(seg)
			}
		}
		b.WriteString("+" + strings.Join(segs, "."))
	}
	return b.String(), true
}

func FuzzParse(f *testing.F) {
	for _, tt := range normalizeTests {
		f.Add(tt.in)
	}
	for _, tt := range invalidVersionTests {
		f.Add(tt.in)
	}
	for _, s := range orderedVersions {
		f.Add(s)
	}
	g := newGrammar()
	f.Fuzz(func(t *testing.T, s string) {
		v, err := Parse(s)
		want, ok := g.normalize(s)
		if err != nil {
			var ive *InvalidVersionError
			if !errors.As(err, &ive) {
				t.Fatalf("Parse(%q) error %T, want *InvalidVersionError", s, err)
			}
			if ive.Input != s || ive.Offset < 0 || ive.Offset > len(s) || ive.Reason == "" {
				t.Fatalf("Parse(%q) error %#v is malformed", s, ive)
			}
			if ok {
				t.Fatalf("Parse(%q) error %v, but the grammar accepts it as %q", s, err, want)
			}
			return
		}
		got := v.String()
		if !ok {
			t.Fatalf("Parse(%q) = %q, but the grammar rejects it", s, got)
		}
		if got != want {
			t.Fatalf("Parse(%q) = %q, want %q", s, got, want)
		}
		if !g.canonical.MatchString(got) {
			t.Fatalf("Parse(%q) = %q, which is not in canonical form", s, got)
		}
		w, err := Parse(got)
		if err != nil {
			t.Fatalf("Parse(%q) error: %v", got, err)
		}
		if again := w.String(); again != got {
			t.Fatalf("Parse(%q) = %q, want %q", got, again, got)
		}
		if v.Compare(w) != 0 || w.Compare(v) != 0 {
			t.Fatalf("Parse(%q).Compare(Parse(%q)) != 0", s, got)
		}
		if c := v.Public().Compare(v); c > 0 || (c != 0) != (v.Local() != "") {
			t.Fatalf("Parse(%q).Public().Compare(v) = %d", s, c)
		}
		if !v.IsPrerelease() && v.Base().Compare(v) > 0 {
			t.Fatalf("Parse(%q).Base() = %q sorts after it", s, v.Base())
		}
	})
}

// canon is the normalised form with trailing zero release components
// removed: two versions compare equal exactly when their canon is equal.
func canon(v Version) string {
	r := v.release
	for len(r) > 1 && r[len(r)-1] == "0" {
		r = r[:len(r)-1]
	}
	v.release = r
	return v.String()
}

func FuzzCompare(f *testing.F) {
	for _, tt := range compareTests {
		f.Add(tt.a, tt.b)
	}
	for i := 1; i < len(orderedVersions); i++ {
		f.Add(orderedVersions[i-1], orderedVersions[i])
	}
	var pivots []Version
	for _, s := range orderedVersions {
		v, err := Parse(s)
		if err != nil {
			f.Fatal(err)
		}
		pivots = append(pivots, v)
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		va, err := Parse(a)
		if err != nil {
			return
		}
		vb, err := Parse(b)
		if err != nil {
			return
		}
		ab := va.Compare(vb)
		if ab < -1 || ab > 1 || vb.Compare(va) != -ab {
			t.Fatalf("Parse(%q).Compare(Parse(%q)) = %d, reverse = %d", a, b, ab, vb.Compare(va))
		}
		if (ab == 0) != (canon(va) == canon(vb)) {
			t.Fatalf("Parse(%q).Compare(Parse(%q)) = %d, but canonical forms are %q and %q", a, b, ab, canon(va), canon(vb))
		}
		for _, p := range pivots {
			bp, ap := vb.Compare(p), va.Compare(p)
			if ab <= 0 && bp <= 0 && (ap > 0 || (ap == 0 && (ab < 0 || bp < 0))) {
				t.Fatalf("ordering not transitive: %q vs %q = %d, %q vs %q = %d, %q vs %q = %d", a, b, ab, b, p, bp, a, p, ap)
			}
			if ab >= 0 && bp >= 0 && (ap < 0 || (ap == 0 && (ab > 0 || bp > 0))) {
				t.Fatalf("ordering not transitive: %q vs %q = %d, %q vs %q = %d, %q vs %q = %d", a, b, ab, b, p, bp, a, p, ap)
			}
		}
	})
}

func FuzzSpecifiers(f *testing.F) {
	for _, tt := range containsTests {
		f.Add(tt.spec, tt.version)
	}
	for _, tt := range specifierStringTests {
		f.Add(tt.in, "1.0")
	}
	for _, tt := range invalidSpecifierTests {
		f.Add(tt.in, "1.0")
	}
	f.Fuzz(func(t *testing.T, spec, version string) {
		s, err := ParseSpecifiers(spec)
		if err != nil {
			var ise *InvalidSpecifierError
			if !errors.As(err, &ise) {
				t.Fatalf("ParseSpecifiers(%q) error %T, want *InvalidSpecifierError", spec, err)
			}
			if ise.Input != spec || ise.Reason == "" {
				t.Fatalf("ParseSpecifiers(%q) error %#v is malformed", spec, ise)
			}
			return
		}
		n := s.String()
		s2, err := ParseSpecifiers(n)
		if err != nil {
			t.Fatalf("ParseSpecifiers(%q) error: %v (normalised from %q)", n, err, spec)
		}
		if again := s2.String(); again != n {
			t.Fatalf("ParseSpecifiers(%q) = %q, want %q", n, again, n)
		}
		v, err := Parse(version)
		if err != nil {
			return
		}
		with, without := s.Contains(v, true), s.Contains(v, false)
		if s2.Contains(v, true) != with || s2.Contains(v, false) != without {
			t.Fatalf("ParseSpecifiers(%q) and ParseSpecifiers(%q) disagree on %q", spec, n, version)
		}
		if without && !with || !v.IsPrerelease() && with != without {
			t.Fatalf("ParseSpecifiers(%q).Contains(%q, false) = %v, with true = %v", spec, version, without, with)
		}
		all := true
		for _, c := range s.clauses {
			all = all && c.matches(v)
			checkClause(t, c, v)
		}
		if all != with {
			t.Fatalf("ParseSpecifiers(%q).Contains(%q, true) = %v, but the clauses say %v", spec, version, with, all)
		}
	})
}

// checkClause cross-checks one clause against independent formulations.
func checkClause(t *testing.T, c clause, v Version) {
	t.Helper()
	got := c.matches(v)
	flip := func(op operator) bool {
		d := c
		d.op = op
		return d.matches(v)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("clause %s%s on %q: "+format, append([]any{c.op, c.ver, v}, args...)...)
	}
	// [lower, upper) where upper is the .dev0 of the prefix's next release.
	inRange := func(lower Version, prefix []string) bool {
		next := append([]string(nil), prefix...)
		next[len(next)-1] = incr(next[len(next)-1])
		upper := Version{epoch: c.ver.epoch, release: next, dev: "0", hasDev: true}
		return v.Compare(lower) >= 0 && v.Compare(upper) < 0
	}
	switch c.op {
	case opEqual, opNotEqual:
		other := opNotEqual
		if c.op == opNotEqual {
			other = opEqual
		}
		if flip(other) == got {
			fail("== and != agree")
		}
		if c.wildcard {
			lower := Version{epoch: c.ver.epoch, release: c.ver.release, dev: "0", hasDev: true}
			if want := inRange(lower, c.ver.release); (c.op == opEqual) == (got != want) {
				fail("prefix match = %v, range says %v", got, want)
			}
		}
	case opCompatible:
		if want := inRange(c.ver, c.ver.release[:len(c.ver.release)-1]); got != want {
			fail("= %v, range says %v", got, want)
		}
	case opLess, opGreaterEqual, opLessEqual, opGreater:
		lt, ge, le, gt := flip(opLess), flip(opGreaterEqual), flip(opLessEqual), flip(opGreater)
		if lt && ge || gt && le || lt && !le || gt && !ge {
			fail("<: %v, <=: %v, >=: %v, >: %v", lt, le, ge, gt)
		}
	}
}
