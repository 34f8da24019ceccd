# The verifier evidence of every target being released: [evidence.present],
# [evidence.signed], [evidence.wheels], [evidence.sanitised],
# [evidence.store], [evidence.aggregates], [evidence.lanes] (every lane
# release.toml declares among them) and [evidence.cases]. Evidence entries
# of targets not being released are ignored; for a target without present
# evidence only [evidence.present] is reported.
package mkrelease.release

import data.mkrelease.lib

deny contains "[evidence.present] the release names no targets" if {
	count(lib.targets) == 0
}

deny contains msg if {
	some t in lib.targets
	not lib.has_evidence(t)
	msg := sprintf("[evidence.present] %s: there is no verifier evidence for this target%s", [t, _expected_evidence(t)])
}

_expected_evidence(t) := sprintf(" (expected %s)", [concat(", ", files)]) if {
	files := sort({f |
		some e in lib.list(input.evidence)
		e.target == t
		f := e.file
		is_string(f)
		f != ""
	})
	count(files) > 0
} else := ""

deny contains msg if {
	some e in lib.evidence
	not e.signed_by_trusted_key == true
	msg := sprintf("[evidence.signed] %s: evidence %s is not signed by a trusted verifier key%s%s", [
		e.target, e.file, lib.key(e),
		lib.evidence_reasons(e, "signature"),
	])
}

deny contains msg if {
	some e in lib.evidence
	not e.wheels_match == true
	msg := sprintf("[evidence.wheels] %s: evidence %s is not for the exact wheel digests of this release%s", [
		e.target, e.file,
		lib.evidence_reasons(e, "identity"),
	])
}

deny contains msg if {
	some e in lib.evidence
	not e.sanitised == true
	msg := sprintf("[evidence.sanitised] %s: evidence %s is not sanitised%s", [
		e.target, e.file,
		lib.evidence_reasons(e, "sanitised"),
	])
}

deny contains msg if {
	some e in lib.evidence
	not e.store_intact == true
	msg := sprintf("[evidence.store] %s: the store of evidence %s is not intact%s", [
		e.target, e.file,
		lib.evidence_reasons(e, "store"),
	])
}

# aggregates_match is false when a summary carried in the evidence
# disagrees with its raw records; the figures of the input are always the
# ones mkrelease recomputed from the records.
deny contains msg if {
	some e in lib.evidence
	not e.aggregates_match == true
	msg := sprintf("[evidence.aggregates] %s: a summary in evidence %s disagrees with its raw records%s", [
		e.target, e.file,
		lib.evidence_reasons(e, "aggregates"),
	])
}

deny contains msg if {
	some e in lib.evidence
	count(lib.list(e.lanes)) == 0
	msg := sprintf("[evidence.lanes] %s: evidence %s has no lanes", [e.target, e.file])
}

deny contains msg if {
	some e in lib.evidence
	some lane in lib.list(e.lanes)
	kind := object.get(lane, "kind", null)
	not kind in {"cases", "crossover"}
	msg := sprintf("[evidence.lanes] %s %s: unknown lane kind %v", [e.target, lane.name, _quoted(kind)])
}

deny contains msg if {
	some e in lib.evidence
	some lane in lib.list(e.lanes)
	lane.kind in {"cases", "crossover"}
	not is_object(object.get(lane, lane.kind, null))
	msg := sprintf("[evidence.lanes] %s %s: a %s lane without its %s", [e.target, lane.name, lane.kind, _payload[lane.kind]])
}

_payload := {"cases": "case counts", "crossover": "boards"}

# Every lane release.toml declares is in the evidence, of its kind: an
# `evidence run --lane L` runs some lanes only, and its evidence cannot
# stand for the others.
deny contains msg if {
	some e in lib.evidence
	some d in lib.list(e.declared_lanes)
	not _has_lane(e, d.name)
	msg := sprintf("[evidence.lanes] %s: lane %s is declared in release.toml but missing from the evidence", [e.target, d.name])
}

deny contains msg if {
	some e in lib.evidence
	some d in lib.list(e.declared_lanes)
	some lane in lib.list(e.lanes)
	lane.name == d.name
	not lane.kind == d.kind
	msg := sprintf("[evidence.lanes] %s %s: release.toml declares a %s lane, but the evidence has a %v lane", [
		e.target, d.name, d.kind, object.get(lane, "kind", null),
	])
}

_has_lane(e, name) if {
	some lane in lib.list(e.lanes)
	lane.name == name
}

_quoted(x) := sprintf("%q", [x]) if is_string(x) else := sprintf("%v", [x])

# [evidence.cases]: every case passed. A SKIP is allowed as long as some
# case passed; every case the lane lists as failing (FAIL, ERROR, or an
# invalid status or missing id) is a denial of its own.
deny contains msg if {
	some l in lib.case_lanes
	some c in lib.list(l.cases.failing)
	msg := sprintf("[evidence.cases] %s %s: %s", [l.target, l.lane, _failing(c)])
}

_failing(c) := sprintf("case %s is %s, not PASS", [c.id, c.status]) if {
	c.status in {"FAIL", "ERROR"}
	c.id != ""
} else := sprintf("invalid case (id %q, status %q)", [c.id, c.status])

deny contains msg if {
	some l in lib.case_lanes
	l.cases.total == 0
	msg := sprintf("[evidence.cases] %s %s: the lane ran no cases", [l.target, l.lane])
}

deny contains msg if {
	some l in lib.case_lanes
	c := l.cases
	c.total > 0
	c.pass == 0
	c.fail + c.error + c.invalid == 0
	msg := sprintf("[evidence.cases] %s %s: no case passed (all %d skipped)", [l.target, l.lane, c.skip])
}

deny contains msg if {
	some l in lib.case_lanes
	c := l.cases
	bad := c.fail + c.error + c.invalid
	bad > count(lib.list(c.failing))
	msg := sprintf("[evidence.cases] %s %s: %d cases did not pass (FAIL %d, ERROR %d, invalid %d) but %d are listed", [
		l.target, l.lane, bad, c.fail, c.error, c.invalid, count(lib.list(c.failing)),
	])
}

deny contains msg if {
	some l in lib.case_lanes
	c := l.cases
	sum := c.pass + c.fail + c.error + c.skip + c.invalid
	sum != c.total
	msg := sprintf("[evidence.cases] %s %s: the case counts do not add up (PASS %d + FAIL %d + ERROR %d + SKIP %d + invalid %d = %d, total %d)", [
		l.target, l.lane, c.pass, c.fail, c.error, c.skip, c.invalid, sum, c.total,
	])
}
