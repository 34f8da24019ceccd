# [build.sandboxed]: the build steps ran in a sandbox (docs/building.md, "The sandbox"), as the
# signed provenance records it (buildDefinition.internalParameters.sandbox;
# a provenance without that record counts as not sandboxed), unless
# parameters.allow_unsandboxed ([build] allow_unsandboxed = true in
# release.toml). Without a provenance signed by a trusted key the
# provenance rules refuse, and this one says nothing more.
package mkrelease.release

import data.mkrelease.lib

deny contains msg if {
	input.provenance.present == true
	input.provenance.signed_by_trusted_key == true
	not input.provenance.sandbox.isolated == true
	not input.parameters.allow_unsandboxed == true
	msg := sprintf("[build.sandboxed] the build steps ran without a sandbox (%s); rebuild where user namespaces are allowed, or set [build] allow_unsandboxed = true", [_unsandboxed_reason])
}

_unsandboxed_reason := r if {
	r := input.provenance.sandbox.reason
	is_string(r)
	r != ""
} else := "the provenance does not record a sandbox" if {
	not input.provenance.sandbox.recorded == true
} else := "no reason recorded"

# [build.parts_signed]: a release merged from parts built on several
# machines took every part on the signature of a trusted key, as the
# signed provenance records it: buildDefinition.internalParameters
# .unsigned_parts lists the parts mkrelease merge --allow-unsigned-parts
# took without one (no part statement, or no key to check it with). No
# parameter allows it: merge the parts again with the builders' keys
# trusted. Without a provenance signed by a trusted key the provenance
# rules refuse, and this one says nothing more.
deny contains msg if {
	input.provenance.present == true
	input.provenance.signed_by_trusted_key == true
	some part in lib.list(input.provenance.unsigned_parts)
	msg := sprintf("[build.parts_signed] the part of %s (part.json sha256 %s) was merged without a trusted signature (%s), with mkrelease merge --allow-unsigned-parts", [
		concat(", ", lib.list(part.targets)), part.part_sha256, part.reason,
	])
}
