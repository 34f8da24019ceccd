package pep508

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"
)

// fuzzEnvironments returns environments that exercise every evaluation
// path: complete ones, one with extra set, one with values that are not
// versions, and an empty one.
func fuzzEnvironments(t testing.TB) []Environment {
	_, envs := testEnvironments(t)
	envs = append(envs,
		envs[0].WithExtra("Test"),
		Environment{
			"python_version": "", "python_full_version": "3.12.1+", "implementation_version": "x",
			"os_name": "a,b", "sys_platform": "3.8", "platform_machine": "1.0.*", "platform_python_implementation": "",
			"platform_release": " 1.0 ", "platform_system": "==1", "platform_version": "1.0 , <2", "implementation_name": "'\"",
			"extra": "foo_bar",
		},
		Environment{},
	)
	return envs
}

func outcome(ok bool, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return fmt.Sprint(ok)
}

func partialOutcome(tr Truth, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	return tr.String()
}

// checkParseError checks the invariants of a parse error for input s.
func checkParseError(t *testing.T, fn, s string, err error) {
	t.Helper()
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("%s(%q) error %T, want *ParseError", fn, s, err)
	}
	if pe.Input != s || pe.Offset < 0 || pe.Offset > len(s) || pe.Reason == "" {
		t.Fatalf("%s(%q) error = %#v: bad Input, Offset or Reason", fn, s, pe)
	}
	_ = pe.Error()
}

// checkSameMeaning checks that two markers evaluate alike everywhere.
func checkSameMeaning(t *testing.T, envs []Environment, a, b *Marker) {
	t.Helper()
	for _, env := range envs {
		if x, y := outcome(a.Evaluate(env)), outcome(b.Evaluate(env)); x != y {
			t.Fatalf("%q.Evaluate(%v) = %s, but %q gives %s", a, env, x, b, y)
		}
		if x, y := partialOutcome(a.EvaluatePartial(env)), partialOutcome(b.EvaluatePartial(env)); x != y {
			t.Fatalf("%q.EvaluatePartial(%v) = %s, but %q gives %s", a, env, x, b, y)
		}
	}
}

func addSeeds(f *testing.F) {
	for _, tt := range requirementStringTests {
		f.Add(tt.in)
	}
	for _, tt := range invalidRequirementTests {
		f.Add(tt.in)
	}
	for _, tt := range requirementFieldTests {
		f.Add(tt.in)
	}
	for _, tt := range markerStringTests {
		f.Add("name; " + tt.in)
	}
	for _, tt := range evalTests {
		f.Add("name; " + tt.marker)
	}
}

// FuzzParseRequirement checks that ParseRequirement never panics, that its
// errors point into the input, and that the canonical form parses back to
// itself with the same meaning.
func FuzzParseRequirement(f *testing.F) {
	addSeeds(f)
	envs := fuzzEnvironments(f)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRequirement(s)
		if err != nil {
			checkParseError(t, "ParseRequirement", s, err)
			return
		}
		out := r.String()
		r2, err := ParseRequirement(out)
		if err != nil {
			t.Fatalf("ParseRequirement(%q) = %q, which does not parse: %v", s, out, err)
		}
		if got := r2.String(); got != out {
			t.Fatalf("ParseRequirement(%q) = %q, but ParseRequirement(%q) = %q", s, out, out, got)
		}
		if r2.Name != r.Name || r2.URL != r.URL || !slices.Equal(r2.Extras, r.Extras) ||
			r2.Specifier.String() != r.Specifier.String() || r.NormalizedName() != r2.NormalizedName() {
			t.Fatalf("ParseRequirement(%q) = %#v, but its canonical form %q gives %#v", s, r, out, r2)
		}
		if !slices.IsSorted(r.Extras) || len(slices.Compact(slices.Clone(r.Extras))) != len(r.Extras) {
			t.Fatalf("ParseRequirement(%q).Extras = %q, not sorted and unique", s, r.Extras)
		}
		if (r.Marker == nil) != (r2.Marker == nil) {
			t.Fatalf("ParseRequirement(%q) marker %v, but its canonical form %q has %v", s, r.Marker, out, r2.Marker)
		}
		checkSameMeaning(t, envs, r.Marker, r2.Marker)
	})
}

// FuzzMarker checks that ParseMarker never panics, that its errors point
// into the input, that it agrees with the marker part of ParseRequirement,
// that the canonical form parses back to itself with the same meaning, and
// that evaluation never panics.
func FuzzMarker(f *testing.F) {
	for _, tt := range markerStringTests {
		f.Add(tt.in)
	}
	for _, tt := range invalidMarkerTests {
		f.Add(tt.in)
	}
	for _, tt := range evalTests {
		f.Add(tt.marker)
	}
	for _, tt := range lintTests {
		f.Add(tt.marker)
	}
	envs := fuzzEnvironments(f)
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMarker(s)
		r, rerr := ParseRequirement("name;" + s)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("ParseMarker(%q) error %v, but ParseRequirement(%q) error %v", s, err, "name;"+s, rerr)
		}
		if err != nil {
			checkParseError(t, "ParseMarker", s, err)
			return
		}
		if got := r.Marker.String(); got != m.String() {
			t.Fatalf("ParseMarker(%q) = %q, but ParseRequirement gives the marker %q", s, m, got)
		}
		out := m.String()
		m2, err := ParseMarker(out)
		if err != nil {
			t.Fatalf("ParseMarker(%q) = %q, which does not parse: %v", s, out, err)
		}
		if got := m2.String(); got != out {
			t.Fatalf("ParseMarker(%q) = %q, but ParseMarker(%q) = %q", s, out, out, got)
		}
		if !slices.Equal(m.Variables(), m2.Variables()) {
			t.Fatalf("ParseMarker(%q).Variables() = %q, but its canonical form gives %q", s, m.Variables(), m2.Variables())
		}
		if len(m.Lint()) != len(m2.Lint()) {
			t.Fatalf("ParseMarker(%q).Lint() = %v, but its canonical form gives %v", s, m.Lint(), m2.Lint())
		}
		checkSameMeaning(t, envs, m, m2)
		// EvaluatePartial is sound: a known result holds in every
		// environment that extends the partial one.
		for _, full := range envs[:3] {
			for _, drop := range [][]string{
				{"platform_release", "platform_version"},
				{"python_full_version", "implementation_version", "sys_platform"},
				{"python_version", "os_name", "platform_machine", "platform_system"},
			} {
				part := maps.Clone(full)
				for _, k := range drop {
					delete(part, k)
				}
				tr, perr := m.EvaluatePartial(part)
				ok, err := m.Evaluate(full)
				if perr == nil && tr != Unknown && err == nil && (tr == True) != ok {
					t.Fatalf("ParseMarker(%q): EvaluatePartial(%v) = %v, but Evaluate(%v) = %v", s, part, tr, full, ok)
				}
			}
		}
		// EvaluatePartial agrees with Evaluate when every variable is
		// defined.
		for _, env := range envs {
			ok, err := m.Evaluate(env)
			tr, perr := m.EvaluatePartial(env)
			if tr == Unknown && perr == nil {
				continue
			}
			if err == nil && perr == nil && (tr == True) != ok {
				t.Fatalf("ParseMarker(%q) in %v: Evaluate = %v, EvaluatePartial = %v", s, env, ok, tr)
			}
			if perr != nil && err == nil {
				t.Fatalf("ParseMarker(%q) in %v: EvaluatePartial error %v, Evaluate = %v", s, env, perr, ok)
			}
		}
	})
}
