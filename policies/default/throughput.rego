# The boards of every crossover lane: [evidence.throughput] (overall
# geomean strictly above min_throughput_geomean), [evidence.overall]
# (overall geomean at least min_overall), [evidence.phase] (every phase
# geomean at least min_phase), [evidence.workload] (every usable
# workload's r at least min_workload), [evidence.workload_unusable]
# (every workload usable) and [evidence.noise] (every usable workload's
# largest robust CV at most max_robust_cv). A board over no usable
# workload (n = 0) is a denial of its own, and its geomean is not judged.
package mkrelease.release

import data.mkrelease.lib

deny contains msg if {
	some l in lib.crossover_lanes
	b := l.crossover.overall
	b.n > 0
	minimum := lib.param("min_throughput_geomean")
	geomean := object.get(b, "geomean", null)
	not lib.above(geomean, minimum)
	msg := sprintf("[evidence.throughput] %s %s: overall geomean %s is not above the minimum %s", [
		l.target, l.lane, lib.show_not_above(geomean, minimum), lib.show_threshold(minimum),
	])
}

deny contains msg if {
	some l in lib.crossover_lanes
	not lib.above(object.get(l.crossover.overall, "n", null), 0)
	msg := sprintf("[evidence.overall] %s %s: no usable workload (n = 0)", [l.target, l.lane])
}

deny contains msg if {
	some l in lib.crossover_lanes
	b := l.crossover.overall
	b.n > 0
	minimum := lib.param("min_overall")
	geomean := object.get(b, "geomean", null)
	not lib.at_least(geomean, minimum)
	msg := sprintf("[evidence.overall] %s %s: overall geomean %s is below the minimum %s", [
		l.target, l.lane, lib.show_below(geomean, minimum), lib.show_threshold(minimum),
	])
}

deny contains msg if {
	some l in lib.crossover_lanes
	some b in lib.list(l.crossover.phases)
	not lib.above(object.get(b, "n", null), 0)
	msg := sprintf("[evidence.phase] %s %s/%s: no usable workload in this phase (n = 0)", [l.target, l.lane, b.phase])
}

deny contains msg if {
	some l in lib.crossover_lanes
	some b in lib.list(l.crossover.phases)
	b.n > 0
	minimum := lib.param("min_phase")
	geomean := object.get(b, "geomean", null)
	not lib.at_least(geomean, minimum)
	msg := sprintf("[evidence.phase] %s %s/%s: phase geomean %s is below the minimum %s", [
		l.target, l.lane, b.phase, lib.show_below(geomean, minimum), lib.show_threshold(minimum),
	])
}

deny contains msg if {
	some l in lib.crossover_lanes
	some w in lib.list(l.crossover.workloads)
	w.usable == true
	minimum := lib.param("min_workload")
	r := object.get(w, "r", null)
	not lib.at_least(r, minimum)
	msg := sprintf("[evidence.workload] %s %s/%s: r = %s is below the minimum %s", [
		l.target, l.lane, w.workload, lib.show_below(r, minimum), lib.show_threshold(minimum),
	])
}

deny contains msg if {
	some l in lib.crossover_lanes
	some w in lib.list(l.crossover.workloads)
	not w.usable == true
	msg := sprintf("[evidence.workload_unusable] %s %s/%s: not usable%s", [
		l.target, l.lane, w.workload, _unusable_reasons(w),
	])
}

_unusable_reasons(w) := lib.reasons(lib.list(w.failures)) if count(lib.list(w.failures)) > 0 else := " (no failure recorded)"

deny contains msg if {
	some l in lib.crossover_lanes
	some w in lib.list(l.crossover.workloads)
	w.usable == true
	maximum := lib.param("max_robust_cv")
	cv := object.get(w, "max_robust_cv", null)
	not lib.at_most(cv, maximum)
	msg := sprintf("[evidence.noise] %s %s/%s: robust CV %s is above the maximum %s", [
		l.target, l.lane, w.workload, lib.show_pct_above(cv, maximum), lib.show_pct(maximum),
	])
}
