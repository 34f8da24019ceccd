// Package tarball writes deterministic .tar.gz archives: the offline
// install bundle and the evidence archive. The same entries and options
// give the same bytes on every machine, whatever the order of the entries,
// the file modes and owners on disk, the umask, the time zone, the number
// of cores or the Go scheduler.
//
// # Archive invariants
//
//   - One root folder: every entry lives under Options.Root, a single
//     path element ("vexl-0.3.0-linux-x86_64"), which is itself the first
//     entry.
//   - Every parent directory of an entry is present as its own entry
//     (added automatically); directories can also be given explicitly, to
//     keep an empty one.
//   - Entries are sorted by their full name as stored, in byte order;
//     directory names are stored with a trailing "/", so a directory comes
//     before its contents and every subtree is contiguous.
//   - Names are relative, slash-separated, valid UTF-8, and have no
//     empty, "." or ".." element, no backslash, no control character, no
//     Windows drive letter, at most 4096 bytes in all. Two names that
//     differ only in letter case are refused (they would collide when the
//     bundle is extracted on macOS or Windows), as are duplicates and a
//     name used both as a file and as a directory. The rules include all
//     of those internal/extract enforces on read, so every archive written
//     here can be extracted by mkrelease itself.
//   - Only regular files and directories: no symlinks, hard links,
//     devices, FIFOs or sockets.
//   - Modes: directories 0755; regular files 0644, or 0755 when any
//     executable bit of Entry.Mode is set. Other bits (group/other write,
//     setuid, setgid, sticky) are dropped, so umask and mode noise on disk
//     never reach the archive. The mode on disk is never read.
//   - Owners: uid and gid 0, uname and gname empty — what GNU
//     `tar --owner=0 --group=0 --numeric-owner` writes.
//   - Times: every entry has mtime Options.MTime (SOURCE_DATE_EPOCH,
//     clamped to >= 0); no atime or ctime anywhere.
//   - Format: a USTAR header whenever the name fits one (ASCII, and at
//     most 100 bytes, or splittable at a "/" into a prefix of at most 155
//     and a name of at most 100 bytes). Otherwise — a longer or non-ASCII
//     name — a PAX extended header precedes it holding one "path" record;
//     a file of 8 GiB or more gets a "size" record the same way. PAX
//     headers never carry time, owner or other variable records; their own
//     pseudo-entry ("DIR/PaxHeaders.0/NAME", cut to 100 bytes) has mode 0,
//     uid/gid 0 and mtime 0, as archive/tar writes it. The archive ends
//     with two zero blocks, without padding to a 10 KiB record.
//
// # Compression invariants
//
// The tar stream is gzipped with github.com/klauspost/pgzip, which splits
// the input into blocks of [BlockSize] bytes, compresses them in parallel
// at [Level] and joins them; each block is primed with the last 16 KiB of
// the previous one. Block boundaries depend only on the input, never on
// the number of blocks compressed at once, so the bytes do not depend on
// Options.Concurrency or GOMAXPROCS. The gzip header has no file name, no
// comment, no extra field, mtime 0 (what `gzip -n` writes: the entries
// carry the time) and OS byte 255 ("unknown", as Go's compress/gzip
// writes).
//
// Changing [Level] or [BlockSize], the pinned versions of
// github.com/klauspost/pgzip and github.com/klauspost/compress, or Go's
// archive/tar, changes the bytes of every archive; TestGolden pins them.
//
// # Streaming
//
// Memory stays bounded whatever the file sizes: each file is opened, its
// size taken, and its content copied once, in 256 KiB reads, into the
// compressor, which holds a few 1 MiB blocks per core (the heap grows by
// less than 20 MiB while a 200 MiB file is archived). The archive is hashed
// (sha256) and counted as it is written. A file whose size changes while
// it is being archived is refused. A cancelled context or a failing
// writer stops the write within one read; the compressor's goroutines
// always finish. [Write] then leaves a partial archive in its writer;
// [WriteFile] leaves nothing behind (the archive is written under a
// temporary name and renamed into place by internal/atomicfile only when
// complete).
package tarball
