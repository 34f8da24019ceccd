// Package extract unpacks archives that come from outside mkrelease
// (upstream source archives, offline install bundles, evidence archives)
// into a new directory, refusing anything unsafe or ambiguous. Every
// archive mkrelease extracts goes through this package. The wheel checker
// reads wheels in place with archive/zip, but first audits their structure
// with this package's zipaudit, and compares names with its namefold.
//
// # Formats
//
// tar, tar.gz, tar.xz, tar.bz2, tar.zst and zip, recognised from their
// content (magic numbers, the tar header checksum) in a fixed order; the
// file name is used in messages only. github.com/mholt/archives walks the
// entries and decompresses; it does not sanitise anything, this package
// does.
//
// # Rules
//
// An archive is refused, with an [*EntryError] naming the archive, the
// entry, the rule (a sentinel usable with [errors.Is]) and what to do, if:
//
//   - a name is empty, longer than 4096 bytes (or too long for the file
//     system), contains a NUL byte or a backslash, names the extraction
//     root itself as a non-directory, or ends in "/" without being a
//     directory ([ErrInvalidName]);
//   - a name has a ".." element, with "/" or "\" as separator
//     ([ErrTraversal]);
//   - a name is absolute: it starts with "/" or "\" or has a Windows drive
//     letter ([ErrAbsolute]);
//   - an entry is a character or block device, FIFO, socket or an
//     unsupported tar type ([ErrSpecialFile]);
//   - an entry is a symlink and Options.AllowSymlinks is false
//     ([ErrSymlink]);
//   - a symlink target is empty or malformed, or a hard link points at
//     anything but a regular file extracted earlier ([ErrBadLink]);
//   - a symlink target is absolute, has more leading ".." elements than
//     the link has parent directories, or has a ".." after a normal element
//     (which only following links could judge); a hard link target has
//     ".." or is absolute; or an entry would be written through an earlier
//     symlink, e.g. "link/file" or "a/x" after "a" -> "." ([ErrLinkEscape]);
//   - two entries have the same path after cleaning and stripping
//     (a file and a directory of the same name included; a directory
//     entry may follow files inside it), an entry goes through an earlier
//     file, or the file system already has the name because it folds case
//     or normalises Unicode ([ErrDuplicate]);
//   - two paths (entries or the folders they imply) are one name under
//     Unicode normalisation (NFC), or differ only in case unless
//     Options.AllowCaseCollisions is set: macOS and Windows would keep one
//     file for both ([ErrDuplicate]; see package namefold);
//   - other tools would read the archive differently ([ErrAmbiguous]).
//     In a tar: a PAX global header with any key but comment, times,
//     owners and charset (readers apply global headers differently; git
//     archive's commit-id comment is accepted); two PAX extended headers,
//     two GNU long names or two long link names before one entry; both a
//     PAX path and a GNU long name for one entry (or linkpath and long
//     link name); a meta header followed by a global header or by the end
//     of the archive; a GNU long name (or link name) of which the entry's
//     own name (link) field is not a prefix; a PAX path (linkpath) that
//     is ASCII and fits the ustar field but differs from it, or an unsafe
//     ustar name behind a longer one; a PAX size that differs from the
//     ustar size although it fits there; a link, device, directory or
//     FIFO whose header declares data (GNU tar skips it, archive/tar and
//     Python do not); a sparse file (GNU 'S' or PAX GNU.sparse records).
//     Consistent GNU long names and PAX records, as GNU tar, Python's
//     tarfile, archive/tar and git archive write them, are accepted. In a
//     zip: anything package zipaudit reports (a local header or data
//     descriptor that disagrees with the central directory, overlapping
//     entries or bytes that belong to no entry, data before the first
//     entry or after the end record, a comment holding a record
//     signature, a non-ASCII name without the UTF-8 flag, an Info-ZIP
//     Unicode Path field giving another name); a plain comment, such as
//     git archive's commit id, is accepted;
//   - a file or link has no more path elements than
//     Options.StripComponents removes ([ErrStripComponents]);
//   - there are more than Limits.MaxEntries entries, implicit parent
//     directories included ([ErrTooMany]);
//   - a file's declared or actual size exceeds Limits.MaxFileBytes, or the
//     extracted total would exceed Limits.MaxTotalBytes ([ErrTooLarge]);
//   - the bytes extracted would exceed Limits.MaxRatio times the archive
//     bytes read so far plus Limits.RatioAllowance ([ErrBomb]);
//   - the content is not a supported format ([ErrFormat]);
//   - the archive is corrupt: bad header, bad checksum, truncated, or data
//     other than up to 8 MiB of zero padding after the end of a tar
//     archive, which other tools might extract ([ErrCorrupt]).
//
// The entry, file, total and ratio limits are checked first on what the
// archive declares, before anything is written: a zip's end record
// announces its entry count (read before its central directory) and its
// central directory every size; a tar read from a file (what ExtractFile
// gives) has its headers read first, decompressed but not extracted. So an
// archive of a million empty members is refused in the time it takes to
// read its headers, and writes nothing. They are checked again before each
// write, implicit directories and hard link copies included (a tar read
// from a stream that cannot seek is checked this way only), so a refused
// archive never makes us write more than a limit allows. A refusal by a
// limit names the setting that raises it when the caller gives one
// (Options.Settings), and says the limit is fixed otherwise.
//
// # What is written
//
// Directories get mode 0755; regular files 0644, or 0755 when any
// executable bit is set in the archive; owners, times and other bits are
// not kept (callers hash content). Missing parent directories are created.
// A hard link inside the root becomes a copy of its target. Files are
// created with O_CREATE|O_EXCL through an [os.Root], so nothing existing
// is reused or followed, and no path can leave the root even if a check
// above were wrong.
//
// The destination must not exist. Entries are extracted into a temporary
// directory beside it, flushed to stable storage and renamed onto it
// (without replacing anything, where the platform can) only when the
// whole archive is extracted; on any error, or when the context is
// cancelled, the temporary directory is removed and the destination does
// not exist.
//
// An [*EntryError] for an ambiguous archive gives in Offset where the
// problem is: in the archive file for zip, in the decompressed tar stream
// for the tar formats.
//
// Memory stays bounded whatever the archive size: tar formats stream (the
// decoders' windows are bounded: xz 64 MiB, zstd 128 MiB), and paths are
// remembered as 128-bit hashes (three per path: as is, NFC, folded). A
// zip's central directory is held in memory by the zip reader and by the
// audit, in proportion to the archive's size.
package extract
