package policies

import (
	"context"
	"encoding/json"
	"testing"
)

// FuzzEvaluateJSON evaluates the default policies on arbitrary JSON
// inputs: evaluation never panics, and a release is allowed only when its
// input has the shape of Input and that Input, evaluated again, is allowed
// too (a malformed input can never pass).
func FuzzEvaluateJSON(f *testing.F) {
	e, err := NewEvaluator(context.Background(), nil)
	if err != nil {
		f.Fatal(err)
	}
	good, err := passing().JSON()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"release":{"project":"x","version":"1","targets":[]},"evidence":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return
		}
		d, err := e.evaluateJSON(context.Background(), data)
		if err != nil || !d.Allow {
			return // no decision, or a refusal: nothing is published
		}
		var in Input
		if err := json.Unmarshal(data, &in); err != nil {
			t.Fatalf("allowed an input that is not an Input (%v):\n%s", err, data)
		}
		d2, err := e.Evaluate(context.Background(), in)
		if err != nil || !d2.Allow {
			t.Fatalf("allowed as JSON, refused as Input (%v, %v):\n%s", err, d2, data)
		}
	})
}
