// Package checksum reads, writes and verifies sha256 checksum files: the
// SHA256SUMS of a release, a bundle or an evidence archive, and the
// FILE.sha256 sidecar next to every artifact. Both are in the format
// `sha256sum -c` (GNU coreutils) and `shasum -a 256 -c` (Perl) check, so an
// auditor needs nothing but those tools.
//
// # Format
//
// One line per file: 64 hex digits, two spaces, the name, "\n":
//
//	3a6e…c91f  vexl-0.3.0-linux-x86_64.tar.gz
//
// The two spaces are the text-mode marker both tools accept; on read the
// binary marker (" *") is accepted too, and so are upper-case digits
// (stored lower case). A sidecar has exactly one line naming the base name
// of the artifact beside it. [Sums.Marshal] writes lines sorted by name in
// byte order, so the bytes depend only on the set of sums.
//
// # Names
//
// A name is a slash-separated path relative to the folder the file sits
// in ("wheels/x.whl" inside a bundle): valid UTF-8, not empty, not
// absolute, no Windows drive letter, no empty, "." or ".." element, and no
// backslash or control character (newline and carriage return included).
//
// GNU sha256sum escapes names with a backslash, newline or carriage return
// (the line then starts with "\"), and shasum unescapes backslash and
// newline but not carriage return, so such names do not survive a round
// trip through both tools. mkrelease therefore does not escape: writing a
// name with one of those characters is refused with an error naming the
// file, [Parse] refuses escaped lines (leading "\") saying why, and
// [Verify] reports a listed name with a backslash (a separator on
// Windows, "..\x") as unsafe without touching the file system.
//
// [Parse] is strict about the syntax (every error gives the line number):
// no blank or comment lines, no BSD "SHA256 (name) = …" lines, no CRLF line
// endings, the last line ends with a newline (a missing one usually means
// truncation), at least one line, and no name listed twice. It does not
// judge names beyond that: [Verify] reports unsafe ones as findings, so an
// auditor sees every problem at once.
//
// # Verification
//
// [Verify] checks a list of sums against a folder and reports every
// finding, each naming the file: missing, mismatching (saying when the
// content is the one listed for another name, as when two files are
// swapped), not a regular file (directories, symlinks, devices: listed
// files must be regular files, and links are never followed out of the
// folder), unreadable, unsafe name (never opened), and, on request, files
// present but not listed. Files are opened through an [os.Root] on the
// folder, so no name can reach outside it. Files are hashed in parallel,
// one per core, largest first; each is read once in 128 KiB reads. Memory
// does not depend on file sizes.
//
// Every file is written atomically (internal/atomicfile: temporary name,
// fsync, rename), so a reader or a kill never sees a half-written
// SHA256SUMS or sidecar.
package checksum
