// Package pep440 parses, normalises, orders and matches Python package
// versions as defined by the PyPA "Version specifiers" specification
// (https://packaging.python.org/en/latest/specifications/version-specifiers/,
// originally PEP 440).
//
// # Versions
//
// [Parse] accepts every spelling the specification's "Normalization" section
// requires tools to accept and [Version.String] returns the normalised form:
//
//   - letters are case-insensitive ("1.1RC1" is "1.1rc1");
//   - integers are read by value ("01.02" is "1.2", "1.0+0100" is "1.0+100"),
//     except inside alphanumeric local segments ("1.0+foo0100" is kept);
//   - "alpha", "beta", "c", "pre" and "preview" are spellings of "a", "b",
//     "rc", "rc" and "rc"; "rev" and "r" are spellings of "post";
//   - ".", "-" or "_" may separate the release from a pre-, post- or
//     development-release segment and a segment's letters from its number,
//     and may be omitted ("1.0-ALPHA_1" is "1.0a1", "1.0dev" is "1.0.dev0");
//   - an omitted pre-, post- or development-release number is 0;
//   - "-N" directly after the release or pre-release is the post-release N
//     ("1.0-1" is "1.0.post1"; "1.0-" is invalid);
//   - "-" and "_" separate local segments like "." ("1.0+ubuntu-1" is
//     "1.0+ubuntu.1");
//   - a single leading "v" is ignored, as is leading and trailing white space
//     (every character for which [unicode.IsSpace] reports true, which covers
//     the six ASCII characters the specification lists).
//
// The accepted language is exactly that of the permissive regular expression
// in the specification's appendix, matched against ASCII letters and digits
// only. An epoch "N!" and local labels "+label" are supported. Numbers may be
// arbitrarily large: they are kept as decimal strings, never as machine
// integers, so nothing overflows.
//
// [Version.Compare] implements "Summary of permitted suffixes and relative
// ordering": epoch, then release (shorter releases padded with zeros), then
// ".devN" < "aN" < "bN" < "rcN" < no suffix < ".postN" (with a development
// release of a pre- or post-release sorting just before it), then the local
// label ("Local version identifiers": a version without a label sorts first;
// labels compare segment by segment, numeric segments by value and above
// alphanumeric ones, alphanumeric ones case-insensitively, and a label that
// extends another sorts after it).
//
// # Specifiers
//
// [ParseSpecifiers] parses a comma-separated list of version clauses as in
// the "Version specifiers" section: "~=" (compatible release), "==" and "!="
// (version matching and exclusion, with ".*" prefix matching and local
// labels), "<=", ">=" (inclusive ordered comparison), "<", ">" (exclusive
// ordered comparison, which exclude pre-releases, post-releases and local
// versions of the named version as the specification requires) and "==="
// (arbitrary equality). [Specifiers.Contains] applies all clauses and the
// "Handling of pre-releases" rules.
//
// Where the specification leaves room, this package follows the behaviour of
// the reference implementation (pypa/packaging) so that metadata it accepts
// is accepted by pip and other installers:
//
//   - ".*" is allowed only after a version consisting of an optional epoch
//     and a release ("==1.0.*" and "==1!2.*" are valid; "==1.0a1.*",
//     "==1.0.post1.*", "==1.0.dev1.*" and "==1.0+x.*" are not);
//   - "<V" for a V that is not itself a pre-release excludes every version
//     from V.dev0 upwards, and ">V" excludes every post-release and local
//     version of V (for V without a post- or development segment);
//   - "===" compares case-insensitively against [Version.String], the
//     normalised form, because a [Version] does not remember its spelling;
//   - a clause that names a pre-release counts as explicitly requesting
//     pre-releases, except a "!=" clause ("===" counts when its text parses
//     as a pre-release; a ".*" prefix never names one).
//
// Direct references ("name @ URL") and the rest of the dependency specifier
// grammar (PEP 508) are out of scope.
package pep440
