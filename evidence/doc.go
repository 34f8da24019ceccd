// Package evidence runs a release's verifier lanes against the exact wheels
// of a bundle, installed offline in disposable virtualenvs, and packs what
// they measured into signed, sanitised, checksummed evidence (DESIGN §7).
package evidence
