# [channel.republish], [channel.downgrade]: the version is not already
# published with other bytes (republishing identical bytes is not a
# denial: the publisher makes it a no-op), and it is not lower than the
# newest published version unless parameters.allow_downgrade. The
# publisher compares PEP 440 versions; the policy only reads its verdict.
package mkrelease.release

deny contains msg if {
	input.channel.same_version_published == true
	not input.channel.same_version_identical == true
	msg := sprintf("[channel.republish] %s %s is already published with different bytes; publish a new version", [
		input.release.project, input.release.version,
	])
}

deny contains msg if {
	input.channel.version_lower_than_newest == true
	not input.parameters.allow_downgrade == true
	msg := sprintf("[channel.downgrade] %s %s is lower than the newest published version %s; publish it anyway with `mkrelease publish --allow-downgrade`", [
		input.release.project, input.release.version, input.channel.newest,
	])
}
