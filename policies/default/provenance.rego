# [provenance.present], [provenance.signed], [provenance.subjects]: the
# release has a provenance statement, signed by a trusted key, whose
# subjects are exactly the release's artifacts. Without a statement only
# [provenance.present] is reported: the other two say nothing more.
package mkrelease.release

import data.mkrelease.lib

deny contains msg if {
	not input.provenance.present == true
	msg := sprintf("[provenance.present] there is no provenance statement%s", [_expected_provenance])
}

deny contains msg if {
	input.provenance.present == true
	not input.provenance.signed_by_trusted_key == true
	msg := sprintf("[provenance.signed] provenance %s is not signed by a trusted key%s%s", [
		input.provenance.file, lib.key(input.provenance),
		lib.reasons(lib.list(input.provenance.findings)),
	])
}

deny contains msg if {
	input.provenance.present == true
	not input.provenance.subjects_match == true
	msg := sprintf("[provenance.subjects] the subjects of provenance %s do not match the release's artifacts%s", [
		input.provenance.file,
		lib.reasons(lib.list(input.provenance.findings)),
	])
}

_expected_provenance := sprintf(" (expected %s)", [input.provenance.file]) if {
	is_string(input.provenance.file)
	input.provenance.file != ""
} else := ""
