// Package dist owns the release folder: the name and kind of every file a
// release holds (wheels, bundles, SBOMs, provenance, evidence, summaries,
// sidecars, checksums), the registry of artifacts a build writes, the
// artifact list beside manifest.json and the SHA256SUMS derived from it,
// and [Open], which loads a release folder back as one value.
//
// No other package spells a release file name: builders ask [Names] for
// the name of what they write; checkers, publish and the channel ask
// [Names.Classify] or [Guess] what a name is.
//
// The layout of a release folder:
//
//	NAME-VERSION-PY-ABI-PLATFORM.whl     the wheels of every target
//	NAME-VERSION-TARGET.tar.gz           one offline bundle per target
//	NAME-VERSION.spdx.json               the release's SPDX 2.3 SBOM
//	manifest.json                        every build input and output
//	artifacts.json                       name, kind, target, sha256, size of each artifact
//	RELEASE_NOTES.md                     this version's notes
//	SHA256SUMS                           the reproducible files, derived from artifacts.json
//	FILE.sha256                          a sidecar beside every top-level file
//	build/TARGET/...                     the build outputs
//	NAME-VERSION.intoto.jsonl            signed provenance (DSSE), and
//	NAME-VERSION.sigstore.json           the same as a Sigstore bundle
//	NAME-VERSION-verifier-evidence-TARGET.tar.gz, .intoto.jsonl
//	                                     a target's evidence and its signed statements
//	NAME-VERSION.vsa.intoto.jsonl        the verification summary (in a channel)
package dist
