# [build.sandboxed]: the build steps ran in a sandbox (DESIGN §5), as the
# signed provenance records it (buildDefinition.internalParameters.sandbox;
# a provenance without that record counts as not sandboxed), unless
# parameters.allow_unsandboxed ([build] allow_unsandboxed = true in
# release.toml). Without a provenance signed by a trusted key the
# provenance rules refuse, and this one says nothing more.
package mkrelease.release

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
