// Package extract unpacks archives that come from outside mkrelease
// (upstream source archives, offline install bundles, evidence archives)
// into a new directory, refusing anything unsafe. Every archive mkrelease
// reads goes through this package.
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
// Limits are checked before each write, so a refused archive never makes
// us write more than a limit allows.
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
// Memory stays bounded whatever the archive size: tar formats stream (the
// decoders' windows are bounded: xz 64 MiB, zstd 128 MiB), and paths are
// remembered as 128-bit hashes. A zip's central directory is held in
// memory by the zip reader, in proportion to the archive's size.
package extract
