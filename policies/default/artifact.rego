# [artifact.present], [artifact.verified]: there is something to publish,
# and every artifact verifies.
package mkrelease.release

import data.mkrelease.lib

deny contains "[artifact.present] the release has no artifacts" if {
	count(lib.list(input.artifacts)) == 0
}

deny contains msg if {
	some a in lib.list(input.artifacts)
	not a.verified == true
	msg := sprintf("[artifact.verified] %s (%s) does not verify%s", [a.name, _what(a), _artifact_reasons(a)])
}

_what(a) := sprintf("%s, %s", [a.kind, a.target]) if a.target != "" else := a.kind

_artifact_reasons(a) := lib.reasons(lib.list(a.findings)) if count(lib.list(a.findings)) > 0 else := " (no finding recorded)"
