// Package sanitize keeps private values and credentials out of verifier
// evidence. It has two halves:
//
//   - [Private.String] and [Private.Env] sanitise what mkrelease itself
//     records (environment facts, paths in commands and messages) before
//     anything is written, replacing this machine's private values by
//     stable placeholders;
//   - a [Scanner] reads every staged file before it is packed, and every
//     file of evidence that is imported or published; it matches the
//     patterns below on the file's bytes as they are and on what they
//     decode to (see "Decoded text"). Any finding rejects the evidence
//     ([Err]), naming the file, the byte offset and, for decoded text, the
//     decoding.
//
// # Placeholders
//
// [FromSystem] reads the private values once: the home folder
// (os.UserHomeDir), the user name (user.Current, else $USER, else
// $LOGNAME; "DOMAIN\user" keeps the user), the host name (os.Hostname)
// and the temporary folder (os.TempDir, i.e. $TMPDIR or /tmp), and the
// secrets of the environment ([EnvSecrets]: the variables whose names
// hold KEY, TOKEN, SECRET, PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL or
// AUTH in any case, not only as part of AUTHOR, KEYRING, KEYBOARD, KEYMAP
// or TOKENIZER, and MKRELEASE_KEY_PASSWORD, with a value of at least 8
// bytes that is not a number or a version).
// The caller adds the run's private folders to [Private.Folders] with
// their own placeholders (evidence/runner adds the run's scratch folder,
// which holds every lane's virtualenv, home, temporary and working
// folder, and each folder's path through symbolic links resolved).
//
//	the run's folders (Folders)   their placeholder: "{venv}", "{work}", …
//	the temporary folder (Temp)   {tmp}
//	the home folder (Home)        ~
//	the user name (User)          {user}
//	the host name (Host)          {host}
//
// Rules, shared by String and the Scanner so that whatever String leaves
// the Scanner does not report as this machine's (String also applies them
// to the text normalised as under "Decoded text", and replaces the bytes
// a value was decoded from; it does not decode runs of digits, nor join
// values: what only those find, the Scanner rejects):
//
//   - A path is cleaned (no trailing separator) and ignored when it is
//     empty, relative or "/". A path under /var, /tmp or /etc is also
//     searched under /private (macOS resolves those links and tools print
//     either form).
//   - A path matches only at path-component boundaries: it must start the
//     input or follow a byte that cannot be part of a file name (a quote,
//     a blank, "=", ":" …) or the "://" of a file URL, and the byte after
//     it must not continue a file name ([A-Za-z0-9._+@~-] and non-ASCII).
//     So "/tmp" is not found in "/tmpfs", "/tmp.old", "x/tmp" or
//     "../tmp", and is found in "/tmp", "/tmp/x", "=/tmp:" and
//     "file:///tmp/x".
//   - At one position the longest matching value wins (a venv inside the
//     temporary folder becomes "{venv}", not "{tmp}/…"), and matching
//     resumes after it.
//   - The user name matches as a whole token that is part of a path, a
//     file name or an identifier: neither neighbour is a letter or a digit
//     and at least one is one of / \ - _ . @ ~ = : ("/home/alice/x",
//     "C:\Users\alice", "pytest-of-alice", "alice.log", "alice@host",
//     "USER=alice"); never inside another word ("malice", "alices") nor as
//     a word of prose ("alice said", "(alice)"). It is case-sensitive, as
//     Unix user names are. Names shorter than three bytes, common path
//     components ("lib", "build", …) and CI or image account names
//     ("runner", "ubuntu", "ec2-user", …), which identify nobody, are not
//     searched on their own: they are found through the home folder.
//   - The host name is searched in full and, when dotted, by its first
//     label (the short host name), each in any ASCII case and as a whole
//     label: neither neighbour is a byte of one ([A-Za-z0-9_-]). A
//     distinctive name (five bytes or more and not a common word:
//     "alice-mbp", "fv-az123-456") is found wherever it is such a label;
//     dots may surround it, so it is found in its FQDN. A short or common
//     name ("ci", "dev", "node", "build", "ubuntu", "server", …) would be
//     found in prose and in unrelated names, so it is found only where it
//     is used as a host or a folder name, and never followed by a dot
//     (then it begins another name, as in "bob@ci.example.org"): after
//     "user@" ("alice@ci:~$", "{user}@ci"), after "://" ("ssh://ci:22"),
//     or as a whole path component ("/srv/ci/x", "C:\ci\x"; not
//     "/ci.log", "/ci-cache"). As a path component, a common path or
//     account name (those the user name is not searched for) is not
//     searched, nor a standard top-level folder as the first component of
//     an absolute path (host "dev" is not found in "/dev/null" but is in
//     "/srv/dev/x"). Names shorter than two bytes and "localhost" are
//     ignored. Host names that are hexadecimal container ids are not found
//     inside longer hex digests, whose neighbouring bytes are hex digits.
//
// [Private.Env] records only an allowlist of variables (LANG, LC_ALL,
// LC_CTYPE, TZ, PYTHONHASHSEED, PYTHONUTF8, SOURCE_DATE_EPOCH, plus those
// the caller names, e.g. from release.toml's record_env), never PATH nor
// the variables that name the account or the machine, each value
// sanitised, and a value that still holds a finding replaced by
// "{redacted}".
//
// # Patterns
//
// The Scanner looks for the following, byte by byte (text encoded as
// UTF-8 or ASCII; compressed content is not looked into). Regular
// expressions describe the shapes; "before" and "after" are conditions on
// the neighbouring byte (or the start or end of the file). Credential
// shapes were read from GitHub's "Supported secret scanning patterns" and
// token-format posts (docs.github.com, github.blog 2021-04-05 "Behind
// GitHub's new authentication token formats"), the providers' own
// documentation (AWS IAM unique identifier prefixes, GitLab token
// prefixes, Slack token types, RFC 6750 for bearer tokens, PyPI's
// macaroon tokens, sigstore's PEM types) and gitleaks' rule set; the
// code is this package's own.
//
//	private-key            -----BEGIN [A-Za-z0-9 ._]{0,64}PRIVATE KEY( BLOCK)?-----
//	                       (any case): PKCS#8, "ENCRYPTED PRIVATE KEY", RSA, EC,
//	                       OPENSSH, DSA, PGP "PRIVATE KEY BLOCK", sigstore's
//	                       "ENCRYPTED SIGSTORE PRIVATE KEY", cosign's
//	                       "ENCRYPTED COSIGN PRIVATE KEY". A header alone suffices.
//	                       Also a DER-encoded key, after the header of its outer
//	                       SEQUENCE (30 and a short or long length): PKCS #8
//	                       02 01 00|01 30 LL 06 LL and the OID of rsaEncryption,
//	                       RSASSA-PSS, id-ecPublicKey, id-dsa, X25519, Ed25519,
//	                       X448 or Ed448; PKCS #1 02 01 00 02 81|82 LL.. 00 then a
//	                       byte ≥ 80; SEC 1 02 01 01 04 LL (LL 18..42) then A0|A1
//	                       after the key; encrypted PKCS #8: the OID of PBES2 or of
//	                       a PKCS #12 scheme after two SEQUENCE headers. And
//	                       "openssh-key-v1" NUL (an OpenSSH key's binary form),
//	                       "PuTTY-User-Key-File-" and a digit, "AGE-SECRET-KEY-1"
//	                       and 50 of [0-9A-Z].
//	aws-access-key-id      (AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}; before and after not
//	                       [A-Za-z0-9]
//	aws-secret-access-key  aws_secret_access_key (any case), [ \t"'`]{0,8}, ":" "="
//	                       ":=" "=>" or "==", [ \t"'`]{0,8}, then [A-Za-z0-9/+]{40} not
//	                       followed by [A-Za-z0-9/+=]
//	github-token           gh[pousr]_[A-Za-z0-9]{36,} (classic, OAuth, user-to-server,
//	                       server-to-server, refresh); github_pat_[A-Za-z0-9_]{82,}
//	                       (fine-grained); before not [A-Za-z0-9]
//	gitlab-token           (glpat|gldt|glrt)-[A-Za-z0-9_-]{20,} (personal, deploy,
//	                       runner); before not [A-Za-z0-9]
//	slack-token            xox[abeoprs]-[0-9][A-Za-z0-9-]{19,}; before not [A-Za-z0-9]
//	google-api-key         AIza[A-Za-z0-9_-]{35}; before and after not [A-Za-z0-9_-]
//	bearer-token           bearer (any case), [ \t]{1,8}, then [A-Za-z0-9._~+/-]{20,};
//	                       before not [A-Za-z0-9] (so "Authorization: Bearer …"
//	                       in a header, a curl command or JSON)
//	npm-token              npm_[A-Za-z0-9]{36,}; before not [A-Za-z0-9]
//	pypi-token             pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,} (pypi.org) or
//	                       pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9_-]{50,} (test.pypi.org);
//	                       before not [A-Za-z0-9]
//	home-path              this machine's home folder (or a folder whose
//	                       placeholder is "~"); any machine's
//	                       /home/NAME and /Users/NAME (NAME starting with
//	                       [A-Za-z0-9_]; not /Users/Shared nor /home/linuxbrew),
//	                       C:\Users\NAME (also JSON-escaped; not Public nor
//	                       Default), and /root; at path boundaries
//	temp-path              this machine's temporary folder (or a folder whose
//	                       placeholder is "{tmp}"); any machine's /tmp/X,
//	                       /var/tmp/X, /var/folders/X and their /private forms, where
//	                       X starts with a file-name byte; at path boundaries. A
//	                       bare "/tmp" names no private file and is not reported,
//	                       unless it is this machine's temporary folder.
//	private-path           any other of the caller's Folders
//	user-name              the user name as a token of a path or an identifier
//	                       (see above)
//	host-name              the host name (see above)
//	environment-secret     the value of a secret of the environment (Secrets),
//	                       anywhere, whatever its neighbours; a value longer than
//	                       128 bytes by any of its 64-byte pieces (the first 16
//	                       and the last). The excerpt names the variable only.
//
// # Decoded text
//
// A lane controls the text of its records, so it can disguise a value:
// escape it, encode it, cut it in pieces. The Scanner matches the
// patterns, besides on a file's bytes as they are, on these views of
// them:
//
//   - The normalised text: every escape sequence decoded — JSON's, C's
//     and Python's \" \\ \/ \' \n \r \t \b \f \v \a, \uXXXX (UTF-16
//     surrogate pairs combined), \u{X…}, \UXXXXXXXX, \xHH and octal \NNN
//     (bytes, and the UTF-8 characters a sequence of them spells), URL
//     percent-encoding %HH and %uXXXX, HTML character references &#N;,
//     &#xH; and the named ones of ASCII punctuation and the no-break space;
//     an escape that decodes to a backslash, "%" or "&" may begin another
//     with the bytes after it ("\\u0067" is "g": JSON's escaping of an
//     escape), up to 3 levels —, every character replaced by its NFKC form
//     (fullwidth "ｇｈｐ＿" is "ghp_", U+00A0 a space, ligatures their
//     letters), and the invisible characters taken out: every format
//     character (Unicode category Cf: the soft hyphen, the zero-width
//     space, non-joiner and joiner, the bidi marks, embeddings, overrides
//     and isolates, the word joiner and invisible operators, U+FEFF, the
//     tag characters), the variation selectors, the combining grapheme
//     joiner U+034F and the Hangul and Khmer fillers. A match there is
//     reported when it depends on what normalising changed — a changed
//     character lies in the bytes its pattern looks at (the 8 before it,
//     its own, the one after), or characters were taken out between two
//     of its bytes — at the offset of the input byte its first byte came
//     from (of the escape's first byte); any other match is one of the
//     bytes as they are. A match in decoded text that covers one found in
//     the bytes as they are is left out ("C:\\Users\\x" is one finding).
//   - What runs of digits decode to. A base64 run is a maximal sequence of
//     base64 digits of either alphabet ([A-Za-z0-9+/_-]), in lines (at
//     most two CR or LF bytes between two digits), ended by at most two
//     "="; it is decoded when it has at least 12 digits, not all hex
//     digits, and of at least two kinds among upper-case letters,
//     lower-case letters and decimal digits (a word or an identifier is of
//     one kind; base64 of 9 bytes or more hardly ever is). A hex run is a
//     maximal sequence of hex digits, in lines too, decoded when it has at
//     least 10. Runs are found in the normalised text (so a JSON string's
//     "\n" wraps them), and decoded at every alignment (from each of the
//     first four digits, two for hex), since a run may begin with digits
//     that belong to no encoding ("id" before a base64 string). What a
//     run decodes to is scanned in turn, as it is and, when it is text
//     (three quarters printable ASCII or white space, or valid UTF-8),
//     normalised and for runs, down to three decodings deep (hex in base64
//     in base64). A finding there is reported at the offset where the run
//     starts in the file. A run is decoded 64 KiB digits at a time, each
//     segment repeating the last 1 KiB digits of the one before, so the
//     memory it takes is bounded whatever its length.
//   - Values joined, where a token may be cut in two. In a file whose first
//     byte other than white space (and a byte order mark) opens a JSON
//     object or array — a JSON document or JSON lines — each string,
//     decoded and normalised, is joined to the string of the same key
//     before it (the path of keys from the top, array indexes left out;
//     an object's keys are a sequence of their own): in JSON lines the
//     same field of the record before, in a summary the same field of the
//     array item before. In an SQLite database each text or blob value of
//     a table or index column is joined to the value of that column in the
//     row before, in key order, and the cells of free pages to the cell
//     before. Around each join the last and first 2·reach+16 bytes are
//     kept (reach: the longest a pattern looks, see below); a match that
//     spans the join is reported (but for the generic shapes of any
//     machine's home and temporary paths: a listing of paths, "/home"
//     then "/lib", would spell one at every join; this machine's are
//     found), and so is a match across the join in
//     what a run of digits that spans it decodes to (the 16 digits on each
//     side are decoded first, at every alignment, and the run further out
//     only when they decode to text there or to a pattern's literal), and
//     a match that starts at a value's first byte is judged as at the
//     start of an input ("ok" then "ghp_…": the token is no part of a
//     word). The offset is that of the value where the match (or the
//     run's digit it was decoded from) starts; the decoding names the
//     value after the join. The same bytes around a join again (the keys
//     of every record, a lane's name) are not scanned again. At most 4096
//     sequences are followed per file.
//   - An SQLite database (a file that begins with "SQLite format 3" and a
//     NUL), read page by page: the page size, reserved bytes and text
//     encoding of its header; the freelist; sqlite_schema for every table
//     and index b-tree, each walked from its root in key order; every
//     cell's record, its payload followed through its overflow pages, each
//     text value (UTF-16 turned into UTF-8) and blob scanned as an input of
//     its own (so a value is judged on its own first byte, not on the
//     bytes before it on the page), its findings at the offsets of the
//     file it came from. Then every page no b-tree reached that still is a
//     b-tree page — a page freed by deleting rows keeps its cells until it
//     is used again — is read the same way, as deleted rows. Deleted cells
//     in the free space of a page in use, and what no cell points to, are
//     scanned as the bytes (and normalised text, and runs) of the file.
//     Every page is read at most once as a b-tree page and once as an
//     overflow page, and every length is bounded by the page or the file,
//     whatever the file says.
//
// A finding's Decoded field names the view: "escape sequences decoded",
// "NFKC-normalised", "invisible characters removed", "base64", "hex",
// nested ones innermost first ("escape sequences decoded in base64"),
// "JSON strings of one key in consecutive records joined, the next at
// offset N", "sqlite page P, table T column C", "sqlite values of T
// column C in consecutive rows joined, the next at offset N". Table and
// column names show only when they are short identifiers in which the
// Scanner finds nothing. Of findings of one kind at one offset, the one
// of the simplest view is kept.
//
// A finding's offset is where the match starts: the first byte of the
// token prefix, of "-----BEGIN", of a DER key's version (after its
// SEQUENCE header), of the keyword (aws_secret_access_key, bearer), of
// the path, of the user or of the host name. After a finding
// the scan resumes at the end of its match, so a home folder is one
// finding, not also one for the user name inside it. At one position the
// longest literal is tried first: "/tmp/x" is reported by the generic
// "/tmp/" shape even where this machine's temporary folder is "/tmp".
//
// ScanTree also scans each entry's name (as "/NAME") and reports a
// finding there with offset -1, and reports every entry that is neither
// a folder nor a regular file (a symbolic link, a device) without
// following it.
//
// What these patterns deliberately do not flag: a sha256 hex digest, a
// base64 RECORD hash, a UUID or a PEP 440 version (no literal prefix with
// the right neighbours), "/tmp" inside a word or a relative path, and the
// placeholders themselves ("{tmp}/x", "~/x", "/home/{user}").
//
// # Streaming
//
// A file is read in chunks (256 KiB) into a buffer of fixed size. A
// pattern never looks at more than a bounded number of bytes before and
// after its start (8 before; after, its reach: under 100 bytes for the
// credentials and generic shapes, a private value's length plus one for
// those), and the last bytes of each chunk are carried over, so every
// match is judged on the same bytes whether or not it straddles a chunk
// boundary. No regular expression runs on the data: a bitset of the byte
// pairs that begin a pattern rejects almost every position (seven per
// 8-byte load and branch), a bitset of hashed four-byte prefixes rejects
// most of the rest, and only then are the patterns starting with that
// byte judged, longest first, by hand-written code. The fuzz test checks
// every finding in the bytes as they are against the regular expressions
// above. The views of decoded text are streamed too: the normaliser holds
// back only an escape or a character cut by the end of a chunk (at most
// 64 bytes), the normalised text is matched only around what changed
// (reach bytes before, 8 after), a run of digits is decoded a segment at a
// time, the JSON and SQLite joins keep a bounded tail per sequence, and
// an SQLite database is read a page at a time (its bitsets of pages read
// take a bit per page). The memory a scan takes does not depend on the
// file's size, but for those bitsets. At most 100 findings are listed per
// file; the rest are counted in one "more-findings" finding (of at most
// 1000 found, one per offset and kind; past that, the count may hold
// some twice).
package sanitize
