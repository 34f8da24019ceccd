# [policy.input]: the policy input has the shape of policies.Input. The
# other rules assume that shape; a malformed input is refused here rather
# than let a rule pass because a figure it compares is missing.
package mkrelease.release

import data.mkrelease.lib

deny contains "[policy.input] there is no policy input" if not input

deny contains msg if {
	some e in lib.input_errors
	msg := sprintf("[policy.input] %s", [e])
}
