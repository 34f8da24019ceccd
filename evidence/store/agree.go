package store

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/mkrelease/mkrelease/evidence"
)

// Finding is one disagreement between a store and the JSONL records.
type Finding struct {
	Table string // "cases" or "measurements"
	Key   string // lane/id or lane/workload/slot/attempt; empty when the whole table is concerned
	Field string // the JSON field name (e.g. "status", "metrics.mae", "steps_s[3]"); empty for a missing row
	Msg   string // what differs, with both values
}

// String renders a finding for a report: "cases lane/id status: ...".
func (f Finding) String() string {
	s := f.Table
	if f.Key != "" {
		s += " " + f.Key
	}
	if f.Field != "" {
		s += " " + f.Field
	}
	return s + ": " + f.Msg
}

// Agree compares the store with the JSONL records row for row and returns
// every disagreement, or nil: a row on one side only, a duplicate key on the
// JSONL side, a field that differs (floats compare bit for bit; an absent
// and an empty map or list are equal, as they are in JSONL). Rows are
// matched by key, not position; findings come in the JSONL's order, then
// rows found only in the store in the store's order. A store that cannot be
// read gives a finding that says so.
func Agree(s *Store, cases []evidence.Case, ms []evidence.Measurement) []Finding {
	return AgreeContext(context.Background(), s, cases, ms)
}

// AgreeContext is [Agree] with a context; a cancelled context gives a
// finding for each table it kept from being read.
func AgreeContext(ctx context.Context, s *Store, cases []evidence.Case, ms []evidence.Measurement) []Finding {
	var out []Finding
	if stored, err := s.CasesContext(ctx); err != nil {
		out = append(out, Finding{Table: "cases", Msg: "cannot read the store: " + err.Error()})
	} else {
		out = append(out, agreeRows("cases", stored, cases, caseKey, diffCase)...)
	}
	if stored, err := s.MeasurementsContext(ctx); err != nil {
		out = append(out, Finding{Table: "measurements", Msg: "cannot read the store: " + err.Error()})
	} else {
		out = append(out, agreeRows("measurements", stored, ms, measurementKey, diffMeasurement)...)
	}
	return out
}

// agreeRows matches stored and jsonl rows by key and reports the
// differences.
func agreeRows[T any](table string, stored, jsonl []T, key func(T) string, diff func(table, key string, st, js T) []Finding) []Finding {
	var out []Finding
	inStore := map[string]int{}
	for i, r := range stored {
		k := key(r)
		if _, dup := inStore[k]; dup {
			out = append(out, Finding{Table: table, Key: k, Msg: "key appears more than once in the store"})
			continue
		}
		inStore[k] = i
	}
	matched := make([]bool, len(stored))
	seen := map[string]bool{}
	for _, r := range jsonl {
		k := key(r)
		if seen[k] {
			out = append(out, Finding{Table: table, Key: k, Msg: "key appears more than once in the JSONL records"})
			continue
		}
		seen[k] = true
		i, ok := inStore[k]
		if !ok {
			out = append(out, Finding{Table: table, Key: k, Msg: "row in the JSONL records is missing from the store"})
			continue
		}
		matched[i] = true
		out = append(out, diff(table, k, stored[i], r)...)
	}
	for i, r := range stored {
		if !matched[i] && inStore[key(r)] == i {
			out = append(out, Finding{Table: table, Key: key(r), Msg: "row in the store is missing from the JSONL records"})
		}
	}
	return out
}

// differ collects the field differences of one row.
type differ struct {
	table, key string
	out        []Finding
}

func (d *differ) str(field, st, js string) {
	if st != js {
		d.out = append(d.out, Finding{d.table, d.key, field, fmt.Sprintf("store has %q, JSONL has %q", st, js)})
	}
}

func (d *differ) float(field string, st, js float64) {
	if math.Float64bits(st) != math.Float64bits(js) {
		d.out = append(d.out, Finding{d.table, d.key, field, fmt.Sprintf("store has %s, JSONL has %s", fmtFloat(st), fmtFloat(js))})
	}
}

func (d *differ) floatMap(field string, st, js map[string]float64) {
	union := maps.Clone(st)
	if union == nil {
		union = map[string]float64{}
	}
	maps.Copy(union, js)
	keys := slices.Sorted(maps.Keys(union))
	for _, k := range keys {
		sv, sok := st[k]
		jv, jok := js[k]
		f := field + "." + k
		switch {
		case !sok:
			d.out = append(d.out, Finding{d.table, d.key, f, fmt.Sprintf("missing from the store, JSONL has %s", fmtFloat(jv))})
		case !jok:
			d.out = append(d.out, Finding{d.table, d.key, f, fmt.Sprintf("store has %s, missing from JSONL", fmtFloat(sv))})
		default:
			d.float(f, sv, jv)
		}
	}
}

func (d *differ) floats(field string, st, js []float64) {
	if len(st) != len(js) {
		d.out = append(d.out, Finding{d.table, d.key, field, fmt.Sprintf("store has %d values, JSONL has %d", len(st), len(js))})
		return
	}
	for i := range st {
		d.float(field+"["+strconv.Itoa(i)+"]", st[i], js[i])
	}
}

// fmtFloat shows a float so that different values always look different.
func fmtFloat(f float64) string {
	return strconv.FormatFloat(f, 'g', -1, 64)
}

func diffCase(table, key string, st, js evidence.Case) []Finding {
	d := differ{table: table, key: key}
	d.str("status", st.Status, js.Status)
	d.str("tier", st.Tier, js.Tier)
	d.floatMap("metrics", st.Metrics, js.Metrics)
	d.floatMap("tolerance", st.Tolerance, js.Tolerance)
	d.float("duration_s", st.Duration, js.Duration)
	d.str("message", st.Message, js.Message)
	return d.out
}

func diffMeasurement(table, key string, st, js evidence.Measurement) []Finding {
	d := differ{table: table, key: key}
	d.str("phase", st.Phase, js.Phase)
	d.str("role", st.Role, js.Role)
	d.str("outcome", st.Outcome, js.Outcome)
	d.floats("steps_s", st.Steps, js.Steps)
	d.str("result_sha256", st.ResultSHA256, js.ResultSHA256)
	d.str("error", st.Error, js.Error)
	return d.out
}
