// Package sbom writes and reads the software bill of materials of a release
// as SPDX 2.3 JSON and as CycloneDX 1.6 JSON: one model per
// [Release] ([Build] checks it once into a [BOM]), two encoders
// ([BOM.SPDX], [BOM.CycloneDX]), each a pure function of the input, valid
// against its official JSON schema and carrying the NTIA minimum elements
// (supplier, component name, version, unique identifier, checksum,
// dependency relationships, author of the SBOM data, timestamp). [Generate]
// and [GenerateCycloneDX] write one document; [Parse] and [ParseCycloneDX]
// read one back for `mkrelease verify`; [CheckNamespace] and
// [CheckSerialNumber] check their content-derived identifiers.
//
// # Model
//
// Section numbers are those of the SPDX 2.3 specification.
//
//   - A document is the release's (every target it builds: the release
//     folder's NAME-VERSION.spdx.json) or, with [Release].Target set, one
//     target's: the SBOM inside that target's offline bundle, named
//     NAME-VERSION-TARGET, holding that target's wheels and closure, the
//     sources and overlays its build read and its toolchains, and nothing
//     of any other target, so that it is the same document whether the
//     release builds that target alone or with others.
//   - The document (§6) DESCRIBES one package for the release itself (name,
//     version, supplier, declared license, download location NOASSERTION)
//     and, when a target's Bundle is given, the bundle File.
//   - Every wheel of the release and every wheel of the dependency closure
//     is a Package (§7) per target, with packageFileName, one SHA256
//     checksum (§7.10), filesAnalyzed false, licenseDeclared (the wheel's
//     License-Expression; NOASSERTION when absent), supplier ("Person: …" or
//     "Organization: …"; NOASSERTION when unknown), download location (the
//     URL it was fetched from, else NOASSERTION) and a PACKAGE-MANAGER purl
//     external reference pkg:pypi/NAME@VERSION?file_name=FILE (Annex F; the
//     pypi type's file_name qualifier names the wheel file, so that the
//     wheels of one version for several targets each have their own purl;
//     the version and the file name are percent-encoded as the purl
//     specification says). The release's own wheels inherit the release's
//     license and supplier when they declare none.
//   - licenseConcluded is NOASSERTION everywhere: mkrelease does no license
//     analysis (§7.13 reserves NOASSERTION for "made no attempt"). Copyright
//     text is NOASSERTION likewise.
//   - Each pinned source is a Package with primaryPackagePurpose SOURCE. Its
//     download location (§7.7) is "git+URL@COMMIT" for a git URL (scp-style
//     "user@host:path" becomes "git+ssh://user@host/path@COMMIT"), the URL of
//     an http(s) archive, and NOASSERTION for a folder of the project or a
//     repository or archive given as a project path (sourceInfo then names
//     the path). An archive carries its SHA256 checksum; versionInfo is the
//     commit for git and the locked "h1:" tree hash otherwise; the tree hash
//     is also an OTHER external reference of type "dirhash-h1". Its supplier
//     is the source's Supplier (release.toml's [[source]] supplier), else
//     NOASSERTION: a source is its upstream's, so it does not inherit the
//     release's supplier.
//   - Each patch overlay is a document-level File (§8) "./PATH" of type
//     SOURCE. §8.4 requires a SHA1 file checksum ("1..1 SHA1, others may be
//     optionally provided"), so a File carries SHA1 and SHA256 and Generate
//     refuses one without either. A tree overlay (no patch file) is a Package
//     with its "h1:" hash.
//   - Each toolchain is a Package (purpose APPLICATION). release.lock locks
//     its identity line (the first line its version command printed, e.g.
//     "go version go1.26.8 linux/amd64"); versionInfo is the version read
//     from it by a table of rules (1.26.8; "0.11.0" for zig's; 12-win32
//     for "x86_64-w64-mingw32-gcc (GCC) 12-win32"), and the comment quotes
//     the line. When no rule reads a version, versionInfo is left out and
//     the comment says so: a command line is not a version. Its supplier is
//     the toolchain's Supplier ([[toolchain]] supplier), else NOASSERTION.
//     Toolchains of targets this document does not describe are left out:
//     they built nothing in it.
//   - Each target's offline bundle, when given, is a document-level File of
//     type ARCHIVE with SHA1 and SHA256.
//
// Packages never nest files (the schema has no "files" inside a package);
// containment is expressed with CONTAINS relationships (§11).
//
// # Relationships
//
// All from Table 68 of §11.1, written in the direction the table defines:
//
//	SPDXRef-DOCUMENT DESCRIBES release, DESCRIBES each bundle
//	release   CONTAINS        each own wheel, of every target
//	bundle    CONTAINS        each own wheel and dependency of its target
//	package   DEPENDS_ON      each package named in its DependsOn, resolved
//	                          among the wheels and dependencies of the same
//	                          target (the plugin wheel DEPENDS_ON the
//	                          compiler wheel this way)
//	release   DEPENDS_ON      a dependency nothing else depends on (with a
//	                          comment), so every closure member is reachable
//	release   GENERATED_FROM  each source and each overlay
//	overlay   PATCH_FOR       its source: the source package is the pristine
//	                          pinned upstream and the patch is to be applied
//	                          to it (PATCH_APPLIED would name the patched
//	                          result, which is not an element here)
//	toolchain BUILD_TOOL_OF   the wheels of its target (the release, for a
//	                          toolchain of every target or a target with no
//	                          wheels)
//
// # Identifiers
//
// SPDX identifiers are derived from names, never counters, so they do not
// move when an unrelated element is added. Each name component is sanitised
// to [A-Za-z0-9.-] by replacing every other byte with "-", and components are
// joined with "-":
//
//	SPDXRef-Package-release-NAME-VERSION
//	SPDXRef-Package-wheel-TARGET-NAME-VERSION
//	SPDXRef-Package-dependency-TARGET-NAME-VERSION
//	SPDXRef-Package-source-NAME
//	SPDXRef-Package-overlay-SOURCE-NAME        (tree overlay)
//	SPDXRef-File-overlay-SOURCE-NAME           (patch overlay)
//	SPDXRef-Package-toolchain-NAME             (every target)
//	SPDXRef-Package-toolchain-TARGET-NAME      (one target)
//	SPDXRef-File-bundle-TARGET
//
// e.g. SPDXRef-Package-wheel-linux-x86-64-vexl-compiler-0.3.0. Two elements
// whose identifiers coincide after sanitising are refused, naming both.
// Distribution names are PEP 503-normalised first.
//
// # Namespace
//
// The documentNamespace (§6.5) is derived from the content, so the same
// release gives the same bytes on any machine and a different release a
// different namespace:
//
//	https://mkrelease.dev/spdx/NAME-VERSION-DIGEST          (the release)
//	https://mkrelease.dev/spdx/NAME-VERSION-TARGET-DIGEST   (one target)
//
// NAME, VERSION and TARGET are sanitised as identifier components. DIGEST is the
// lower-case hex SHA-256 of the complete output of Generate (every byte,
// trailing newline included) as it would be if DIGEST were 64 "0"
// characters. To check a document, replace the 64 hex digits at the end of
// its documentNamespace value by "0"s, in place, and hash the file: the
// result is the digits. [CheckNamespace] does exactly that.
//
// # Bytes
//
// The JSON is written by tools-golang's writer over its v2_3 structs: field
// order is the structs' order, indented with two spaces, HTML characters not
// escaped, one trailing newline. Packages and files are sorted by SPDX
// identifier, relationships by (spdxElementId, relationshipType,
// relatedSpdxElement) and duplicates dropped, so the order of the input
// slices does not matter. creationInfo.created is Release.Created (the
// SOURCE_DATE_EPOCH) in RFC 3339 UTC; the creators are "Tool: TOOL" and the
// release's supplier when known. Nothing else about the machine, the user or
// the time of the run is recorded; local paths are recorded only relative
// to the project, and URLs carrying credentials are refused.
//
// # CycloneDX
//
// The CycloneDX 1.6 document encodes the same model: the release is
// metadata.component, every other element a component whose bom-ref is its
// SPDX identifier without "SPDXRef-". Wheels, dependency wheels, sources and
// the release are type "library", toolchains "application", patches,
// overlay folders and bundles "file". A wheel carries its purl (with
// file_name), its SHA-256 hash, its declared license expression
// (acknowledgement "declared"; none for NOASSERTION or NONE) and, when known,
// a "distribution" reference to the URL it was fetched from. A git source
// has a "vcs" reference to its SPDX download location (git+URL@COMMIT), an
// archive a "source-distribution" reference with the archive's SHA-256;
// the "h1:" tree hash is the property mkrelease:dirhash-h1. A supplier is
// the component's supplier (an organizationalEntity: the name, and the
// email as a contact when it reads as an address), and a Person also its
// author; the release's supplier is metadata.supplier, and, as SPDX's
// creator, metadata.manufacturer (an Organization) or metadata.authors (a
// Person); metadata.tools names mkrelease and its version; the timestamp
// is the SOURCE_DATE_EPOCH.
//
// dependencies has an entry for every element and mirrors the
// relationships: "A dependsOn B" for A DEPENDS_ON, CONTAINS, GENERATED_FROM
// or PATCH_FOR B, and for B BUILD_TOOL_OF A (the wheel depends on the
// toolchain that built it). DESCRIBES is metadata.component.
//
// The serialNumber is "urn:uuid:" and the UUIDv5 (RFC 9562 §5.5, URL
// namespace) of SerialPrefix followed by the lower-case hex SHA-256 of the
// complete output as it would be with the serial number
// urn:uuid:00000000-0000-0000-0000-000000000000. The JSON is encoding/json
// over this package's structs (field order the structs', two-space indent,
// HTML characters not escaped, one trailing newline), components in
// identifier order, dependsOn lists sorted.
package sbom
