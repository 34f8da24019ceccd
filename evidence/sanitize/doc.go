// Package sanitize keeps private values and credentials out of verifier
// evidence (DESIGN §7). It has two halves:
//
//   - [Private.String] and [Private.Env] sanitise what mkrelease itself
//     records (environment facts, paths in commands and messages) before
//     anything is written, replacing this machine's private values by
//     stable placeholders;
//   - a [Scanner] reads every staged file before it is packed; any
//     finding rejects the evidence ([Err]), naming the file and the byte
//     offset.
//
// # Placeholders
//
// [FromSystem] reads the private values once: the home folder
// (os.UserHomeDir), the user name (user.Current, else $USER, else
// $LOGNAME; "DOMAIN\user" keeps the user), the host name (os.Hostname)
// and the temporary folder (os.TempDir, i.e. $TMPDIR or /tmp). The caller
// adds the run's private folders to [Private.Folders] with their own
// placeholders.
//
//	the run's folders (Folders)   their placeholder: "{venv}", "{work}", …
//	the temporary folder (Temp)   {tmp}
//	the home folder (Home)        ~
//	the user name (User)          {user}
//	the host name (Host)          {host}
//
// Rules, shared by String and the Scanner so that whatever String leaves
// the Scanner does not report as this machine's:
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
//
// # Invisible characters
//
// A credential may reach a file split by characters that render as
// nothing: the zero-width space, non-joiner and joiner (U+200B..U+200D),
// the marks U+200E, U+200F and U+061C, the word joiner and invisible
// operators (U+2060..U+2064), U+FEFF, the soft hyphen U+00AD, the bidi
// embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069),
// and in general every format character (Unicode category Cf, the tag
// characters included), the variation selectors, the combining grapheme
// joiner U+034F and the Hangul and Khmer fillers. The credential patterns
// are therefore also matched on the input with those characters taken
// out; such a match is reported only when characters were taken out
// between its bytes (any other is a match of the input as it is), at the
// offset of its first byte in the input, with the same excerpt. The
// private values and the generic path shapes are matched on the input as
// it is. Invisible characters are found in the same pass as the literals
// (their first two bytes are in the pair filter), so the second match
// only runs over the few bytes before each of them; one inside another
// finding's match is not looked at.
//
// A finding's offset is where the match starts: the first byte of the
// token prefix, of "-----BEGIN", of the keyword (aws_secret_access_key,
// bearer), of the path, of the user or of the host name. After a finding
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
// every finding against the regular expressions above. At most 100
// findings are listed per file; the rest are counted in one
// "more-findings" finding.
package sanitize
