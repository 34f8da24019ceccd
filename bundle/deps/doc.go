// Package deps computes, fetches and checks the dependency closure of a
// release: the exact third-party wheels its own wheels need at run time,
// for one target, taken from a lock with hashes, and writes the bundle's
// requirements.txt and pylock.toml.
//
// # Locks
//
// [ReadPylock] reads a PEP 751 pylock.toml (lock-version 1.0) and
// [ReadRequirements] a requirements file in pip's hash-checking form
// ("name==version ; marker --hash=sha256:..."). Both give a [Lock]: a list
// of [Locked] packages, each a normalised name and version, an optional
// marker, and the sha256 digests of the wheels allowed for it (pylock.toml
// also names each wheel and where it is). Anything a lock says that cannot
// be honoured is a *LockError naming the file and the line or entry; what
// is ignored is listed in [Lock.Notes].
//
// # What fits a target
//
// A [Target] is a platform (the platform tag of the release's own wheels,
// e.g. manylinux_2_34_x86_64) and the CPython feature releases of the
// support boundary. [TargetTags] lists, for each of those Pythons, the tags
// pip would accept on such a machine, in packaging.tags.sys_tags() order:
// a manylinux_2_Y target accepts every manylinux_2_V with V <= Y (and the
// legacy aliases), a macOS target the older macOS releases, never the
// reverse; plain linux_ARCH wheels are never accepted. A wheel fits a
// Python when one of its tags is in that Python's list; among the wheels
// of a package the one whose best tag comes first is chosen, a higher
// build tag breaking ties.
//
// # The rules of Resolve
//
//   - The closure starts from the Requires-Dist of the release's own
//     wheels ([Root]); they are in the bundle themselves and satisfy
//     requirements on each other (their versions are checked against the
//     specifiers).
//   - Resolution runs once for each Python of the target. A requirement is
//     followed when its marker holds, or may hold, in the marker
//     environment of that Python on the target's machine(s)
//     (pep508.TargetEnvironment; a universal2 target is an arm64 and an
//     x86_64 Mac; variables a target does not fix, such as
//     platform_release, are unknown, and a marker that may hold counts as
//     holding, so the bundle can serve every machine of the target).
//     Extras asked for in a requirement bring in the dependency's
//     Requires-Dist with `extra == "x"` markers.
//   - Each requirement must be satisfied by exactly one locked package: of
//     the lock entries with its name, exactly one may apply (its marker
//     holds for the Python) and its version must be allowed by the
//     specifier (pre-releases included: the lock pinned them on purpose).
//     A lock entry's requires-python, the lock's own requires-python and
//     environments, and each chosen wheel's Requires-Python must admit the
//     Python (some micro release of it; a finding notes when not all do).
//   - The package must have a wheel that fits the Python, whose bytes are
//     pinned by the lock (see [Finder.Fetch]); an sdist is never used, nor
//     a vcs, directory or archive source. The wheel is checked with
//     wheel.Check (damage, unsafe members, RECORD mismatches and metadata
//     that does not match the file name are refusals; style findings are
//     warnings), its METADATA must name the locked name and version, and
//     its Requires-Dist are followed in turn.
//   - Every problem is reported, not just the first: the error is a
//     *ResolveError holding one *RefusalError per problem, each naming the
//     requirement, the wheel that declares it, the Pythons concerned, what
//     is wrong ([Kind]: missing from the lock, version not allowed, no
//     wheel fits — with the wheel's tags and the target's —, more than one
//     candidate, hash mismatch, sdist only, ...) and what to do.
//   - Locked packages that nothing needs on the target are not bundled;
//     they are reported as findings ("unused", or "not-for-target" when
//     their marker excludes the target), not errors: one lock commonly
//     serves several targets.
//
// # Fetching, verifying, caching
//
// A [Finder] looks for a locked package's files where the lock says (url,
// path), in find-links folders, and in a simple repository index: PEP 691
// JSON is asked for first with the Accept header, PEP 503 HTML is read
// otherwise (file:// indexes are HTML trees). An index's #sha256=
// fragments and data-core-metadata / data-dist-info-metadata hashes are
// hints: they may let the Finder skip a file, never accept one; a metadata
// hash that disagrees with the wheel's METADATA is a finding. Every file is
// hashed as it is copied into the cache (CacheDir/sha256/HEX/NAME, written
// under a temporary name and renamed), kept only if its sha256 (and the
// locked size, when recorded) is pinned, and hashed again whenever it is
// taken from the cache; an entry that no longer matches is discarded. A
// package is served from the cache without any source when the cache holds
// every file the lock pins for it, so a second resolution does no network
// access and chooses exactly what the first did. Network access carries
// the caller's context; [Finder.Offline] forbids it altogether.
//
// # Writing the bundle's locks
//
// [RequirementsTxt] and [PylockToml] list every wheel of the bundle (the
// release's own and the closure) deterministically: sorted, with sha256
// hashes, relative paths (wheels/, dependencies/) in pylock.toml, and a
// marker restricting a package to the Pythons that need it, so that
// `pip install --no-index --find-links wheels --find-links dependencies
// --require-hashes -r requirements.txt` installs exactly the closure.
package deps
