// Package artdiff says where two versions of a release artifact differ:
// the artifact, the member inside it (recursively: a wheel inside a
// bundle) and what about that member differs. `mkrelease reproduce`
// uses it when a rebuilt file's digest does not match the recorded one.
//
// [Compare] takes the recorded ("original") file and the rebuilt one and
// returns the first [Difference], or nil when the files are byte for byte
// identical. [Diffoscope] runs the external diffoscope tool, when it is
// installed, for a full report.
//
// # What is compared
//
// The format is recognised from the content (zip, gzip and ELF magic
// numbers, the "ustar" tar magic) and, for JSON and text, from the name
// and the content; the name is otherwise used in messages only.
//
//   - zip (wheels): first the structure of each side, with the audit of
//     internal/extract/zipaudit: a zip that readers would read differently
//     (a local header that disagrees with the central directory, bytes
//     belonging to no entry or to two, prepended or trailing bytes, ...)
//     is reported as "ambiguous archive", naming the side, the member and
//     the offset, since what archive/zip shows of it is not what every
//     installer sees. Then the members in archive order. Where the names first
//     differ: a member missing in the rebuilt file, an extra one, or the
//     same members in another order. For two members of the same name: the
//     content (recursively), mode, mtime, compression method, the other
//     header fields (flags, versions, CRC-32, sizes, extra field, comment)
//     and the compressed bytes. Then the archive comment and, when all of
//     that is equal, the offset of the first differing byte and the region
//     it falls in (a local header, a member's data, the central directory).
//   - tar, tar.gz (bundles): the gzip header fields (name, comment, mtime,
//     OS, extra), then the entries in archive order like zip members (type,
//     link target, content, mode, owner, mtime, the other header fields),
//     then the tar stream's own bytes (padding, trailer) and the compressed
//     bytes.
//   - JSON: the two documents are parsed (numbers kept as written, object
//     members in document order) and compared by value; the first
//     difference is named by its path, as in $.packages[3].checksums. Equal
//     values written differently are reported as text.
//   - text: the first differing line and (byte) column, with both lines
//     (quoted, truncated).
//   - ELF (when both sides parse with debug/elf): the byte offset of the
//     first difference, the section (or header) it falls in, and every
//     section whose bytes differ.
//   - anything else: the offset of the first differing byte.
//
// Within a member, content is compared before metadata, so a member whose
// bytes changed is reported as such even when its size or CRC field also
// changed. The "first" difference is the first in archive order: an outer
// archive's entries in order, then the members of the first differing
// entry in their order.
//
// # Limits
//
// Nothing is extracted to disk, and contents are compared chunk by chunk
// as they stream: only a JSON document is read whole. A zip or ELF file
// inside another archive is read through a re-openable stream (its last
// 4 MiB, where the central directory and section headers live, are kept
// in memory); a JSON document over 8 MiB or 250,000 values is compared as
// text. At most
// three archives are opened one inside another (a zip in a tar in a zip);
// a deeper one is compared as bytes.
//
// A member whose name is unsafe to extract (empty, absolute, a ".."
// element, a backslash, a NUL or control character, over 4096 bytes) is
// not opened: it is itself reported as the difference, and so is a sparse
// tar entry (whose holes could expand without bound). An input that
// cannot be parsed (a truncated zip, a corrupt gzip stream) is reported
// as an "unreadable" difference naming the side; Compare returns an error
// only for I/O failures on the two files themselves and for cancellation.
package artdiff
