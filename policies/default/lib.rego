# Helpers of mkrelease's default release policies: the policy input's
# shape, fail-closed comparisons and the formatting of figures and
# thresholds. User policies may import data.mkrelease.lib too.
#
# Fail closed: every comparison helper is undefined unless both operands
# are numbers, and the rules use them as `not lib.at_least(x, min)`, so a
# missing or mistyped figure is a denial, never a silent pass. A malformed
# input is also a denial of its own ([policy.input], see input_schema).
package mkrelease.lib

# param(name) is input.parameters[name], or null when there is none (a
# comparison with null fails, so the rule using it denies).
param(name) := object.get(_params, name, null)

_params := input.parameters if is_object(input.parameters) else := {}

# targets are the targets being released.
targets := input.release.targets if is_array(input.release.targets) else := []

# list(x) is x when it is an array, else the empty array (a JSON null).
list(x) := x if is_array(x) else := []

# evidence contains the present evidence entries of the released targets.
evidence contains e if {
	some e in list(input.evidence)
	e.present == true
	e.target in targets
}

# has_evidence(t) holds when target t has present evidence.
has_evidence(t) if {
	some e in evidence
	e.target == t
}

# crossover_lanes contains {target, lane, crossover} for every crossover
# lane of the present evidence.
crossover_lanes contains {"target": e.target, "lane": lane.name, "crossover": lane.crossover} if {
	some e in evidence
	some lane in list(e.lanes)
	lane.kind == "crossover"
	is_object(lane.crossover)
}

# case_lanes contains {target, lane, cases} for every cases lane of the
# present evidence.
case_lanes contains {"target": e.target, "lane": lane.name, "cases": lane.cases} if {
	some e in evidence
	some lane in list(e.lanes)
	lane.kind == "cases"
	is_object(lane.cases)
}

# at_least (≥), above (>) and at_most (≤) compare the figure x with the
# threshold t; each is undefined unless both are numbers. (Not named ge,
# gt and le: those are the builtins behind >=, > and <=.)
at_least(x, t) if {
	is_number(x)
	is_number(t)
	x >= t
}

above(x, t) if {
	is_number(x)
	is_number(t)
	x > t
}

at_most(x, t) if {
	is_number(x)
	is_number(t)
	x <= t
}

# fixed(x, d) is the number x rounded half away from zero to d decimals
# (d is 2 or 4), written with exactly d decimals. sprintf("%.4f") cannot
# be used: it receives an integral number (1, or 1.0 in JSON) as a Go int
# and prints "%!f(int=1)".
fixed(x, d) := s if {
	scale := _scales[d]
	n := round(abs(x) * scale)
	s := sprintf("%s%d.%0*d", [_sign(x, n), floor(n / scale), d, n % scale])
}

_scales := {2: 100, 4: 10000}

_sign(x, n) := "-" if {
	x < 0
	n > 0
} else := ""

# show_below(x, t) shows x, a figure below the threshold t, with 4
# decimals, or in full when 4 decimals would round it up to t.
show_below(x, t) := s if {
	is_number(x)
	s := fixed(x, 4)
	to_number(s) < t
} else := sprintf("%v", [x])

# show_not_above(x, t) shows x, a figure not above the threshold t, with
# 4 decimals, or in full when 4 decimals would round it above t.
show_not_above(x, t) := s if {
	is_number(x)
	s := fixed(x, 4)
	to_number(s) <= t
} else := sprintf("%v", [x])

# show_pct_above(x, t) shows the fraction x, above the threshold t, as a
# percentage with 2 decimals, or in full when 2 decimals would round it
# down to t.
show_pct_above(x, t) := s if {
	is_number(x)
	is_number(t)
	p := fixed(x * 100, 2)
	to_number(p) > t * 100
	s := concat("", [p, "%"])
} else := s if {
	is_number(x)
	s := sprintf("%v%%", [x * 100])
} else := sprintf("%v", [x])

# show_threshold(t) shows the threshold t with 2 decimals when that is
# exact, else in full.
show_threshold(t) := s if {
	is_number(t)
	s := fixed(t, 2)
	to_number(s) == t
} else := sprintf("%v", [t])

# show_pct(t) shows the fraction t as a percentage with 2 decimals when
# that is exact, else in full.
show_pct(t) := s if {
	is_number(t)
	p := fixed(t * 100, 2)
	to_number(p) == t * 100
	s := concat("", [p, "%"])
} else := s if {
	is_number(t)
	s := sprintf("%v%%", [t * 100])
} else := sprintf("%v", [t])

# summary(xs) joins the first three strings of xs with "; ", saying how
# many more there are.
summary(xs) := concat("; ", xs) if count(xs) <= 3

summary(xs) := sprintf("%s (and %d more)", [concat("; ", array.slice(xs, 0, 3)), count(xs) - 3]) if count(xs) > 3

# reasons(xs) is ": " and the summary of xs, or "" when xs is empty.
reasons(xs) := concat("", [": ", summary(xs)]) if count(xs) > 0 else := ""

# evidence_reasons(e, check) is reasons() of the findings of evidence e
# made by the named check, each as "file: message".
evidence_reasons(e, check) := reasons([_finding(f) |
	some f in list(e.findings)
	f.check == check
])

_finding(f) := sprintf("%s: %s", [f.file, f.message]) if {
	is_string(f.file)
	f.file != ""
} else := sprintf("%v", [f.message])

# key(x) names the key that signed x (" (key K)"), or "" when unknown.
key(x) := sprintf(" (key %s)", [x.key_id]) if {
	is_string(x.key_id)
	x.key_id != ""
} else := ""

# input_schema is the JSON schema of the policy input (policies.Input).
# Every field is required; hi may be null (an unbounded interval).
input_schema := {
	"type": "object",
	"required": ["release", "parameters", "artifacts", "provenance", "evidence", "channel"],
	"properties": {
		"release": {
			"type": "object",
			"required": ["project", "version", "targets"],
			"properties": {
				"project": {"type": "string"},
				"version": {"type": "string"},
				"targets": {"type": "array", "items": {"type": "string"}},
			},
		},
		"parameters": {
			"type": "object",
			"required": [
				"min_throughput_geomean", "min_overall", "min_phase", "min_workload", "max_robust_cv",
				"allow_downgrade", "allow_unsandboxed",
			],
			"properties": {
				"min_throughput_geomean": {"type": "number"},
				"min_overall": {"type": "number"},
				"min_phase": {"type": "number"},
				"min_workload": {"type": "number"},
				"max_robust_cv": {"type": "number"},
				"allow_downgrade": {"type": "boolean"},
				"allow_unsandboxed": {"type": "boolean"},
			},
		},
		"artifacts": {"type": "array", "items": {
			"type": "object",
			"required": ["name", "kind", "target", "sha256", "verified", "findings"],
			"properties": {
				"name": {"type": "string"},
				"kind": {"type": "string"},
				"target": {"type": "string"},
				"sha256": {"type": "string"},
				"verified": {"type": "boolean"},
				"findings": {"type": "array", "items": {"type": "string"}},
			},
		}},
		"provenance": {
			"type": "object",
			"required": ["present", "file", "signed_by_trusted_key", "key_id", "subjects_match", "findings", "sandbox", "unsigned_parts"],
			"properties": {
				"present": {"type": "boolean"},
				"file": {"type": "string"},
				"signed_by_trusted_key": {"type": "boolean"},
				"key_id": {"type": "string"},
				"subjects_match": {"type": "boolean"},
				"findings": {"type": "array", "items": {"type": "string"}},
				"sandbox": {
					"type": "object",
					"required": ["recorded", "isolated", "sandbox", "namespaces", "reason"],
					"properties": {
						"recorded": {"type": "boolean"},
						"isolated": {"type": "boolean"},
						"sandbox": {"type": "string"},
						"namespaces": {"type": "array", "items": {"type": "string"}},
						"reason": {"type": "string"},
					},
				},
				"unsigned_parts": {"type": "array", "items": {
					"type": "object",
					"required": ["targets", "part_sha256", "reason"],
					"properties": {
						"targets": {"type": "array", "items": {"type": "string"}},
						"part_sha256": {"type": "string"},
						"reason": {"type": "string"},
					},
				}},
			},
		},
		"evidence": {"type": "array", "items": {"$ref": "#/definitions/evidence"}},
		"channel": {
			"type": "object",
			"required": ["exists", "published_versions", "newest", "same_version_published", "same_version_identical", "version_lower_than_newest"],
			"properties": {
				"exists": {"type": "boolean"},
				"published_versions": {"type": "array", "items": {"type": "string"}},
				"newest": {"type": "string"},
				"same_version_published": {"type": "boolean"},
				"same_version_identical": {"type": "boolean"},
				"version_lower_than_newest": {"type": "boolean"},
			},
		},
	},
	"definitions": {
		"evidence": {
			"type": "object",
			"required": [
				"target", "present", "file", "signed_by_trusted_key", "key_id", "wheels_match",
				"sanitised", "store_intact", "aggregates_match", "findings", "lanes", "declared_lanes",
			],
			"properties": {
				"target": {"type": "string"},
				"present": {"type": "boolean"},
				"file": {"type": "string"},
				"signed_by_trusted_key": {"type": "boolean"},
				"key_id": {"type": "string"},
				"wheels_match": {"type": "boolean"},
				"sanitised": {"type": "boolean"},
				"store_intact": {"type": "boolean"},
				"aggregates_match": {"type": "boolean"},
				"findings": {"type": "array", "items": {
					"type": "object",
					"required": ["check", "file", "message"],
					"properties": {
						"check": {"type": "string"},
						"file": {"type": "string"},
						"message": {"type": "string"},
					},
				}},
				"lanes": {"type": "array", "items": {"$ref": "#/definitions/lane"}},
				"declared_lanes": {"type": "array", "items": {
					"type": "object",
					"required": ["name", "kind"],
					"properties": {
						"name": {"type": "string"},
						"kind": {"enum": ["cases", "crossover"]},
					},
				}},
			},
		},
		"lane": {
			"type": "object",
			"required": ["name", "kind"],
			"properties": {
				"name": {"type": "string"},
				"kind": {"type": "string"},
				"cases": {"$ref": "#/definitions/cases"},
				"crossover": {"$ref": "#/definitions/crossover"},
			},
		},
		"cases": {
			"type": "object",
			"required": ["total", "pass", "fail", "error", "skip", "invalid", "failing"],
			"properties": {
				"total": {"type": "integer", "minimum": 0},
				"pass": {"type": "integer", "minimum": 0},
				"fail": {"type": "integer", "minimum": 0},
				"error": {"type": "integer", "minimum": 0},
				"skip": {"type": "integer", "minimum": 0},
				"invalid": {"type": "integer", "minimum": 0},
				"failing": {"type": "array", "items": {
					"type": "object",
					"required": ["id", "status"],
					"properties": {
						"id": {"type": "string"},
						"status": {"type": "string"},
					},
				}},
			},
		},
		"crossover": {
			"type": "object",
			"required": ["overall", "phases", "workloads"],
			"properties": {
				"overall": {"$ref": "#/definitions/board"},
				"phases": {"type": "array", "items": {"allOf": [
					{"$ref": "#/definitions/board"},
					{"required": ["phase"], "properties": {"phase": {"type": "string"}}},
				]}},
				"workloads": {"type": "array", "items": {
					"type": "object",
					"required": ["workload", "phase", "r", "usable", "max_robust_cv", "failures"],
					"properties": {
						"workload": {"type": "string"},
						"phase": {"type": "string"},
						"r": {"type": "number"},
						"usable": {"type": "boolean"},
						"max_robust_cv": {"type": "number"},
						"failures": {"type": "array", "items": {"type": "string"}},
					},
				}},
			},
		},
		"board": {
			"type": "object",
			"required": ["geomean", "lo", "hi", "n", "bounded", "unusable"],
			"properties": {
				"geomean": {"type": "number"},
				"lo": {"type": "number"},
				"hi": {"type": ["number", "null"]},
				"n": {"type": "integer", "minimum": 0},
				"bounded": {"type": "boolean"},
				"unusable": {"type": "integer", "minimum": 0},
			},
		},
	},
}

# input_errors contains one "field: problem" string per way the input
# departs from input_schema.
input_errors contains "the input is not a JSON object" if {
	not is_object(input)
}

input_errors contains msg if {
	is_object(input)
	[ok, errs] := json.match_schema(input, input_schema)
	not ok
	some e in errs
	msg := sprintf("%s: %s", [e.field, e.desc])
}
