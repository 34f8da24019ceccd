// Package wheel writes, reads and checks Python wheels (the binary
// distribution format, PEP 427/491), and reads the platform a native
// binary needs.
//
// Writing is deterministic: the same members and metadata give the same
// bytes on every machine. The invariants:
//   - members in a fixed order: package files sorted by path, then the
//     .data folder, then .dist-info with RECORD last;
//   - every member dated SOURCE_DATE_EPOCH (clamped to 1980-01-01, the
//     earliest zip date), in UTC; modes 0644, or 0755 for executables;
//     no directory entries; no owner, no extra fields beyond the
//     extended timestamp;
//   - "version needed to extract" 1.0 for stored members, 2.0 for
//     deflated ones, 4.5 for those that need zip64 fields; "version made
//     by" Unix 2.0 (0x0314, like CPython's zipfile), or Unix 4.5 for
//     zip64 members;
//   - members compressed with deflate at a fixed level by a pinned
//     library (klauspost/compress), in parallel across cores; members
//     that are already compressed, or that deflate does not shrink, are
//     stored;
//   - RECORD lists every member with its sha256 (urlsafe base64, no
//     padding) and size, RECORD's own row empty; each byte is hashed once,
//     as it is compressed.
package wheel
