package sbom

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

const noAssertion = "NOASSERTION"

// sourceLocation returns the SPDX download location (§7.7) and the
// sourceInfo text of a pinned source, or an error message.
//
// The download location grammar of §7.7 is
// <vcs_tool>+<transport>://<host_name>[/<path_to_repository>][@<revision_tag_or_branch>][#<sub_path>],
// so a git URL becomes "git+URL@COMMIT" ("git+" is not doubled) and an
// scp-style "user@host:path" becomes "git+ssh://user@host/path@COMMIT".
// Project paths are not download locations: they give NOASSERTION and are
// named, relative, in sourceInfo.
func sourceLocation(s Source) (loc, info, msg string) {
	switch s.Kind {
	case SourceLocal:
		if m := checkProjectPath(s.Location); m != "" {
			return "", "", m
		}
		return noAssertion, fmt.Sprintf("folder %s of the project, pinned by its h1: tree hash", s.Location), ""
	case SourceGit:
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
			if m := checkCredentials(pu); m != "" {
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
			if m := checkProjectPath(s.Location); m != "" {
				return "", "", m
			}
			return noAssertion, fmt.Sprintf("git repository %s of the project, commit %s", s.Location, s.Commit), ""
		}
	case SourceArchive:
		if strings.Contains(s.Location, "://") {
			pu, err := url.Parse(s.Location)
			if err != nil {
				return "", "", fmt.Sprintf("archive URL %q: %v", s.Location, err)
			}
			if pu.Scheme != "http" && pu.Scheme != "https" {
				return "", "", fmt.Sprintf("archive URL %q: want an http(s) URL or a project path", s.Location)
			}
			if m := checkCredentials(pu); m != "" {
				return "", "", m
			}
			return s.Location, fmt.Sprintf("archive %s, sha256 %s", s.Location, s.SHA256), ""
		}
		if m := checkProjectPath(s.Location); m != "" {
			return "", "", m
		}
		return noAssertion, fmt.Sprintf("archive %s of the project, sha256 %s", s.Location, s.SHA256), ""
	}
	return "", "", fmt.Sprintf("kind %q: want %q, %q or %q", s.Kind, SourceLocal, SourceGit, SourceArchive)
}

// isSCP reports whether u is git's scp-like syntax "user@host:path".
func isSCP(u string) bool {
	at := strings.Index(u, "@")
	colon := strings.Index(u, ":")
	slash := strings.Index(u, "/")
	return at > 0 && colon > at+1 && (slash < 0 || slash > colon)
}

// checkProjectPath refuses what is not a clean, relative, slash-separated
// path inside the project: an absolute path would record the build machine.
func checkProjectPath(p string) string {
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

// checkCredentials refuses URLs with user information on http(s): it is
// where tokens go, and the SBOM is published.
func checkCredentials(u *url.URL) string {
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

// wheelLocation checks the download location of a wheel: "" or NOASSERTION
// (unknown), or an http(s) URL without credentials. A file: URL or a path
// would record the build machine.
func wheelLocation(loc string) (string, string) {
	if loc == "" || loc == noAssertion {
		return noAssertion, ""
	}
	pu, err := url.Parse(loc)
	if err != nil {
		return "", fmt.Sprintf("download location %q: %v", loc, err)
	}
	if pu.Scheme != "http" && pu.Scheme != "https" {
		return "", fmt.Sprintf("download location %q: want the http(s) URL the wheel was fetched from, or NOASSERTION (a path or file: URL would record the build machine)", loc)
	}
	if m := checkCredentials(pu); m != "" {
		return "", m
	}
	if !singleLine(loc) || strings.ContainsAny(loc, " \t") {
		return "", fmt.Sprintf("download location %q has white space or a control character", loc)
	}
	return loc, ""
}
