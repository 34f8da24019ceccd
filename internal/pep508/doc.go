// Package pep508 parses, prints and evaluates Python dependency specifiers
// such as `requests[security] >= 2.8.1, == 2.8.* ; python_version < "3.9"`,
// as defined by the PyPA "Dependency specifiers" specification
// (https://packaging.python.org/en/latest/specifications/dependency-specifiers/,
// originally PEP 508) with its amendments up to July 2026, which include the
// January 2026 rewrite of how marker comparisons are evaluated.
//
// # Requirements
//
// [ParseRequirement] implements the "Grammar", "Whitespace", "Names",
// "Extras" and "Versions" sections: a name, optional extras in brackets,
// then either a version specifier (optionally in parentheses, optionally
// with a trailing comma) or a direct reference "@ URL", then an optional
// "; marker". Names and extra names are checked with package pyname (the
// "Names and normalization" specification, which the "Names" section
// refers to) and version clauses with package pep440. Only spaces and tabs
// are white space, as in the grammar's wsp rule. A URL ends at white space,
// so "name @ URL ; marker" needs the white space before the ";".
//
// # Markers
//
// [ParseMarker] implements "Composing marker expressions" and "User supplied
// constants": "and" binds tighter than "or", parentheses group, and each
// comparison has a marker variable on one side (either side) and a string in
// single or double quotes on the other. Chained comparisons are rejected.
//
// [Marker.Evaluate] implements "Marker comparisons" with the field types of
// "Defined environment marker fields", choosing the installation-tool
// behaviour where the specification offers one:
//
//   - String fields (os_name, sys_platform, platform_machine,
//     platform_python_implementation, platform_system,
//     implementation_name): "==" and "!=" compare exactly (case-sensitive);
//     "in" and "not in" are Python substring tests (`"SMP" in
//     platform_version` asks whether the value contains "SMP",
//     `sys_platform in "linux darwin"` whether "linux darwin" contains the
//     value); ">=" and "<=" mean "==", and ">" and "<" are always false;
//     "~=" and "===" are an evaluation error, as in pypa/packaging (the
//     specification also allows treating them as "==").
//   - Version fields (python_version, python_full_version,
//     implementation_version) and Version | String fields
//     (platform_release, platform_version): if the string written on the
//     right is a version that makes a valid pep440 clause with the operator
//     and the string on the left is a valid version, the clause decides,
//     pre-releases included (so `python_full_version < "3.13"` is false for
//     3.13.0rc1, as "<" excludes pre-releases of the named version).
//     Otherwise the String rules apply. "===" compares the two strings,
//     ignoring ASCII case. "in" and "not in" are substring tests, as in
//     pypa/packaging (the specification allows them to be false for
//     Version fields).
//   - extra: the quoted name and the environment's value are compared after
//     name normalisation, so extra == "Foo_Bar" holds for the extra
//     "foo-bar". "==" and "!=" are supported; every other operator is
//     false, as the specification asks (pypa/packaging does substring tests
//     for "in").
//
// python_full_version values ending in "+" (untagged CPython builds) are read
// as "+local" versions, as pypa/packaging does.
//
// Following "Unknown marker fields", a variable that the [Environment] does
// not define is an evaluation error, never true or false; every comparison
// is evaluated, so the error does not depend on operand order.
// [Marker.EvaluatePartial] treats undefined variables as unknown instead and
// answers with sound three-valued logic. [TargetEnvironment] builds the
// environment of a CPython release on a common platform; it leaves the
// variables a target does not determine (such as platform_release) unset
// rather than empty, so that they cannot silently compare false.
// [Marker.Lint] lists the comparisons that "Marker comparisons" says
// publishing tools SHOULD reject although installers accept them.
//
// # Canonical form
//
// [Requirement.String] and [Marker.String] print a canonical form that
// parses back to the same value: no white space except single spaces around
// marker operators, "and" and "or" (and before ";" after a URL);
// parentheses only around an "or" inside an "and"; double quotes, or single
// quotes around a value containing a double quote; extras sorted and
// normalised; the string compared with extra normalised; legacy variable
// names replaced by standard ones; version specifiers as pep440 prints them.
// The side a variable is written on is kept, since `"3.9" < python_version`
// and `python_version > "3.9"` differ for some versions.
//
// # Deliberate deviations
//
//   - The legacy variable names os.name, sys.platform, platform.version,
//     platform.machine, platform.python_implementation and
//     python_implementation are accepted, as pypa/packaging accepts them.
//   - The lock-file variables extras and dependency_groups are rejected:
//     they are only defined in pylock.toml, and their set values do not fit
//     [Environment].
//   - Backslashes in quoted strings are rejected rather than read as escapes
//     (the specification leaves escapes undefined). Printable non-ASCII
//     characters are accepted; control characters are not.
//   - Comparing two quoted strings or two variables is a syntax error (the
//     specification allows tools to reject it; pypa/packaging fails when
//     evaluating it).
//   - A URL must consist of the characters RFC 3986 allows (no quotes,
//     spaces, "<", ">", "\", "^", "`", "{", "|", "}" or non-ASCII bytes;
//     "%" followed by two hex digits). A URL in which a ";" is followed by
//     text that parses as a marker is rejected: the white space that would
//     make that text a marker is almost certainly missing.
//   - Parentheses in markers may nest at most 64 deep.
package pep508
