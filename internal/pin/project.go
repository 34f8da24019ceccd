package pin

import (
	"net/url"
	"path"
	"strings"
)

// Project names the project a release is built from, so that the
// provenance can give the project's own files (a local source, a git
// repository or an archive kept in the project, an overlay) an absolute URI
// that does not depend on the folder it was checked out in: two checkouts
// of the project in different folders record the same URIs.
type Project struct {
	// Repository is the URL of the git repository the project folder is a
	// work tree of, as release.toml's [project] urls spells it, and Dir the
	// folder of release.toml inside that work tree ("" at its top). Both
	// are empty when the project is not in such a work tree, or its
	// remotes are none of [project] urls.
	Repository, Dir string
	// Name and Version are the release's (normalised), which name the
	// project when its repository is not known.
	Name, Version string
}

// URI is the absolute URI of rel, a file or folder of the project
// (slash-separated, relative to the folder of release.toml):
//
//	git+REPOSITORY#DIR/REL        the project's repository is known
//	pkg:generic/NAME@VERSION#REL  otherwise (a package URL whose subpath is rel)
//
// The first is the SPDX download location form of a folder of a
// repository, without a revision: the content is pinned by the digests
// beside the URI (a local folder is pinned by its tree hash, not by a
// commit of the project). The second names the project being released,
// the only thing known about where the file comes from besides its digest.
func (p Project) URI(rel string) string {
	if p.Repository != "" {
		return "git+" + strings.TrimPrefix(p.Repository, "git+") + "#" + escapePath(path.Join(p.Dir, rel))
	}
	return "pkg:generic/" + url.PathEscape(p.Name) + "@" + url.PathEscape(p.Version) + "#" + escapePath(rel)
}

// escapePath percent-encodes each segment of a slash-separated path.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// isURL reports whether location is a URL (scheme://...) or git's
// scp-like user@host:path, not a path of the project.
func isURL(location string) bool {
	return strings.Contains(location, "://") || isSCP(location)
}

// gitURI is the provenance URI of a repository URL at commit: git+URL@COMMIT
// ("git+" is not doubled), an scp-like user@host:path as
// git+ssh://user@host/path@COMMIT.
func gitURI(location, commit string) string {
	if isSCP(location) {
		user, rest, _ := strings.Cut(location, "@")
		host, p, _ := strings.Cut(rest, ":")
		return "git+ssh://" + user + "@" + host + "/" + strings.TrimPrefix(p, "/") + "@" + commit
	}
	return "git+" + strings.TrimPrefix(location, "git+") + "@" + commit
}

// SameRepository reports whether the git URLs a and b (http(s), ssh, git
// or scp-like) name the same repository: the same host (any case, any
// port) and path, ignoring the scheme, the user, a trailing slash and a
// ".git" suffix. Local paths and file:// URLs name no shared repository.
func SameRepository(a, b string) bool {
	ka, oka := repositoryKey(a)
	kb, okb := repositoryKey(b)
	return oka && okb && ka == kb
}

func repositoryKey(u string) (string, bool) {
	var host, p string
	switch {
	case strings.Contains(u, "://"):
		pu, err := url.Parse(u)
		if err != nil {
			return "", false
		}
		switch strings.TrimPrefix(pu.Scheme, "git+") {
		case "http", "https", "ssh", "git":
		default:
			return "", false
		}
		host, p = pu.Hostname(), pu.Path
	case isSCP(u):
		_, rest, _ := strings.Cut(u, "@")
		host, p, _ = strings.Cut(rest, ":")
	default:
		return "", false
	}
	p = strings.TrimSuffix(strings.Trim(p, "/"), ".git")
	if host == "" || p == "" {
		return "", false
	}
	return strings.ToLower(host) + "/" + p, true
}
