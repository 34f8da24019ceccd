package pin

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// noAssertion is SPDX's "nothing is asserted" value.
const noAssertion = "NOASSERTION"

// gitLocation is the SPDX download location of a git source.
//
// The download location grammar of SPDX 2.3 §7.7 is
// <vcs_tool>+<transport>://<host_name>[/<path_to_repository>][@<revision_tag_or_branch>][#<sub_path>],
// so a git URL becomes "git+URL@COMMIT" ("git+" is not doubled) and an
// scp-style "user@host:path" becomes "git+ssh://user@host/path@COMMIT".
// Project paths are not download locations: they give NOASSERTION and are
// named, relative, in sourceInfo.
func gitLocation(s Source) (loc, info, msg string) {
	u := s.Location
	switch {
	case strings.Contains(u, "://"):
		pu, err := url.Parse(u)
		if err != nil {
			return "", "", fmt.Sprintf("repository URL %q: %v", u, err)
		}
		scheme := strings.TrimPrefix(pu.Scheme, "git+")
		if scheme == "file" {
			return noAssertion, fmt.Sprintf("git repository on the build machine, commit %s", s.Commit), ""
		}
		if m := CheckCredentials(pu); m != "" {
			return "", "", m
		}
		if !strings.HasPrefix(u, "git+") {
			u = "git+" + u
		}
		return u + "@" + s.Commit, fmt.Sprintf("git repository %s, commit %s", s.Location, s.Commit), ""
	case isSCP(u):
		user, rest, _ := strings.Cut(u, "@")
		host, p, _ := strings.Cut(rest, ":")
		return "git+ssh://" + user + "@" + host + "/" + strings.TrimPrefix(p, "/") + "@" + s.Commit,
			fmt.Sprintf("git repository %s, commit %s", s.Location, s.Commit), ""
	default:
		if m := CheckProjectPath(s.Location); m != "" {
			return "", "", m
		}
		return noAssertion, fmt.Sprintf("git repository %s of the project, commit %s", s.Location, s.Commit), ""
	}
}

// archiveLocation is the SPDX download location of an archive source: its
// http(s) URL, or NOASSERTION for a file of the project.
func archiveLocation(s Source) (loc, info, msg string) {
	if strings.Contains(s.Location, "://") {
		pu, err := url.Parse(s.Location)
		if err != nil {
			return "", "", fmt.Sprintf("archive URL %q: %v", s.Location, err)
		}
		if pu.Scheme != "http" && pu.Scheme != "https" {
			return "", "", fmt.Sprintf("archive URL %q: want an http(s) URL or a project path", s.Location)
		}
		if m := CheckCredentials(pu); m != "" {
			return "", "", m
		}
		return s.Location, fmt.Sprintf("archive %s, sha256 %s", s.Location, s.SHA256), ""
	}
	if m := CheckProjectPath(s.Location); m != "" {
		return "", "", m
	}
	return noAssertion, fmt.Sprintf("archive %s of the project, sha256 %s", s.Location, s.SHA256), ""
}

// isSCP reports whether u is git's scp-like syntax "user@host:path".
func isSCP(u string) bool {
	at := strings.Index(u, "@")
	colon := strings.Index(u, ":")
	slash := strings.Index(u, "/")
	return at > 0 && colon > at+1 && (slash < 0 || slash > colon)
}

// CheckProjectPath refuses, with a message, what is not a clean, relative,
// slash-separated path inside the project: an absolute path in an SBOM
// would record the build machine. It returns "" for a good path.
func CheckProjectPath(p string) string {
	switch {
	case p == "":
		return "empty path"
	case strings.HasPrefix(p, "/") || strings.Contains(p, "\\") || (len(p) > 1 && p[1] == ':'):
		return fmt.Sprintf("path %q is not relative to the project: an SBOM records no machine path; pass the path relative to release.toml", p)
	case path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Sprintf("path %q is not a clean path inside the project (write it as release.lock does, e.g. backend/src)", p)
	case !singleLine(p):
		return fmt.Sprintf("path %q has a control character", p)
	}
	return ""
}

// CheckCredentials refuses, with a message, a URL with user information
// on http(s), or with a password on any scheme: it is where tokens go, and
// an SBOM is published. It returns "" for a good URL.
func CheckCredentials(u *url.URL) string {
	if u.User == nil {
		return ""
	}
	if _, hasPassword := u.User.Password(); hasPassword || strings.HasPrefix(strings.TrimPrefix(u.Scheme, "git+"), "http") {
		bare := *u
		bare.User = nil
		return fmt.Sprintf("URL %s carries user information (credentials are not shown): an SBOM is published; pass the URL without it", bare.String())
	}
	return ""
}

// singleLine reports whether s is non-empty after trimming and holds no
// control character.
func singleLine(s string) bool {
	if strings.TrimSpace(s) == "" {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}
