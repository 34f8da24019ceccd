package sbom

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pin"
)

const noAssertion = "NOASSERTION"

// sourceLocation returns the SPDX download location (§7.7) and the
// sourceInfo text of a pinned source, as its kind gives them
// ([pin.Kind.Download]), or an error message.
func sourceLocation(s Source) (loc, info, msg string) {
	k, ok := pin.Lookup(s.Kind)
	if !ok {
		return "", "", fmt.Sprintf("kind %q: want %s", s.Kind, pin.Want())
	}
	return k.Download(s.Source)
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
	if m := pin.CheckCredentials(pu); m != "" {
		return "", m
	}
	if !singleLine(loc) || strings.ContainsAny(loc, " \t") {
		return "", fmt.Sprintf("download location %q has white space or a control character", loc)
	}
	return loc, ""
}
