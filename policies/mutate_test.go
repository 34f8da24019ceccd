package policies

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// checkDenials fails unless every denial names a default rule and
// policy, and its message is well formed.
func checkDenials(t *testing.T, what string, d *Decision) {
	t.Helper()
	for _, x := range d.Denials {
		if x.Rule == "" || !slices.Contains(DefaultRules(), x.Rule) || !strings.HasPrefix(x.Message, "["+x.Rule+"] ") {
			t.Errorf("%s: denial %q does not start with a default rule id", what, x.Message)
		}
		if !strings.HasPrefix(x.Policy, "default/") {
			t.Errorf("%s: denial %q comes from policy %q", what, x.Message, x.Policy)
		}
		if strings.Contains(x.Message, "%!") || strings.Contains(x.Message, "\n") {
			t.Errorf("%s: denial %q is malformed", what, x.Message)
		}
	}
	if d.Allow != (len(d.Denials) == 0) {
		t.Errorf("%s: Allow = %v with %d denials", what, d.Allow, len(d.Denials))
	}
}

// step is one move from a value to a part of it: a struct field, a slice
// element, or through a pointer.
type step struct {
	field, index int // -1 when unused
	deref        bool
}

func (s step) apply(v reflect.Value) reflect.Value {
	switch {
	case s.deref:
		return v.Elem()
	case s.field >= 0:
		return v.Field(s.field)
	default:
		return v.Index(s.index)
	}
}

// mutations returns every input that differs from in by one field: each
// bool flipped, each number set to a few values, each string emptied or
// changed, each slice emptied or cut short, each pointer nil.
func mutations(in Input) map[string]Input {
	out := map[string]Input{}
	at := func(path []step, change func(reflect.Value)) Input {
		cp := deepCopy(in)
		v := reflect.ValueOf(&cp).Elem()
		for _, s := range path {
			v = s.apply(v)
		}
		change(v)
		return cp
	}
	var walk func(name string, path []step, v reflect.Value)
	walk = func(name string, path []step, v reflect.Value) {
		path = slices.Clip(path)
		switch v.Kind() {
		case reflect.Bool:
			out[name+"=flip"] = at(path, func(x reflect.Value) { x.SetBool(!x.Bool()) })
		case reflect.Int:
			for _, n := range []int64{0, 1, -1, 1000} {
				out[fmt.Sprintf("%s=%d", name, n)] = at(path, func(x reflect.Value) { x.SetInt(n) })
			}
		case reflect.Float64:
			for _, f := range []float64{0, -1, 0.5, 0.8, 0.95, 1, 1.0000001, 1e9} {
				out[fmt.Sprintf("%s=%v", name, f)] = at(path, func(x reflect.Value) { x.SetFloat(f) })
			}
		case reflect.String:
			for _, s := range []string{"", "x", "%v %s %d"} {
				out[fmt.Sprintf("%s=%q", name, s)] = at(path, func(x reflect.Value) { x.SetString(s) })
			}
		case reflect.Pointer:
			if v.IsNil() {
				return
			}
			out[name+"=nil"] = at(path, func(x reflect.Value) { x.SetZero() })
			walk(name, append(path, step{field: -1, index: -1, deref: true}), v.Elem())
		case reflect.Struct:
			for i := range v.NumField() {
				walk(name+"."+v.Type().Field(i).Name, append(path, step{field: i, index: -1}), v.Field(i))
			}
		case reflect.Slice:
			out[name+"=nil"] = at(path, func(x reflect.Value) { x.SetZero() })
			if v.Len() > 1 {
				out[name+"=[:1]"] = at(path, func(x reflect.Value) { x.Set(x.Slice(0, 1)) })
				out[name+"=[1:]"] = at(path, func(x reflect.Value) { x.Set(x.Slice(1, x.Len())) })
			}
			for i := range v.Len() {
				walk(fmt.Sprintf("%s[%d]", name, i), append(path, step{field: -1, index: i}), v.Index(i))
			}
		}
	}
	walk("input", nil, reflect.ValueOf(in))
	return out
}

func deepCopy(in Input) Input {
	b, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	var out Input
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// TestMutations evaluates every one-field change of a passing input: none
// may fail the evaluation or produce a malformed denial, and every
// change that weakens a fact the rules rely on must deny.
func TestMutations(t *testing.T) {
	e := newEvaluator(t)
	ctx := context.Background()
	muts := mutations(passing())
	if len(muts) < 100 {
		t.Fatalf("only %d mutations: the walk is broken", len(muts))
	}
	// Each of these single changes must be refused.
	mustDeny := []string{
		"input.Artifacts=nil",
		"input.Artifacts[0].Verified=flip",
		"input.Provenance.Present=flip",
		"input.Provenance.SignedByTrustedKey=flip",
		"input.Provenance.SubjectsMatch=flip",
		"input.Evidence=nil",
		"input.Evidence[0].Present=flip",
		"input.Evidence[0].SignedByTrustedKey=flip",
		"input.Evidence[0].WheelsMatch=flip",
		"input.Evidence[0].Sanitised=flip",
		"input.Evidence[0].StoreIntact=flip",
		"input.Evidence[0].AggregatesMatch=flip",
		"input.Evidence[0].Lanes=nil",
		"input.Evidence[0].Lanes=[:1]", // the throughput lane never ran
		"input.Evidence[0].Lanes=[1:]",
		"input.Evidence[0].DeclaredLanes[0].Name=\"x\"",
		"input.Evidence[0].DeclaredLanes[1].Kind=\"x\"",
		"input.Provenance.Sandbox.Isolated=flip",
		"input.Release.Targets=nil",
		"input.Channel.VersionLowerThanNewest=flip",
	}
	for _, name := range mustDeny {
		if _, ok := muts[name]; !ok {
			t.Errorf("mutation %s does not exist", name)
		}
	}
	denied := 0
	for name, in := range muts {
		d, err := e.Evaluate(ctx, in)
		if err != nil {
			t.Errorf("%s: Evaluate: %v", name, err)
			continue
		}
		checkDenials(t, name, d)
		if !d.Allow {
			denied++
		}
		if slices.Contains(mustDeny, name) && d.Allow {
			t.Errorf("%s: allowed", name)
		}
	}
	t.Logf("%d mutations, %d denied", len(muts), denied)
}
