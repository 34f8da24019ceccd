package bundle

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/mkrelease/mkrelease/internal/pep440"
)

// headingRE matches a Markdown ATX heading: its level and text.
var headingRE = regexp.MustCompile(`^(#{1,6})[ \t]+(.*?)[ \t#]*$`)

// versionTokenRE pulls the version out of a heading like "0.3.0",
// "[0.3.0] - 2026-11-01", "v0.3.0 — title" or "Version 0.3.0".
var versionTokenRE = regexp.MustCompile(`^(?:[Vv]ersion[ \t]+)?\[?[vV]?([0-9][0-9A-Za-z.!+_-]*?)\]?(?:[ \t(:—–-].*)?$`)

// NotesError is a changelog without a section for the release. It maps to
// exit status 1.
type NotesError struct {
	File, Version string
}

// Error says which heading to add.
func (e *NotesError) Error() string {
	return fmt.Sprintf("%s: no section for version %s\n\thint: add a heading such as `## %s` with the release notes, or fix [project] version", e.File, e.Version, e.Version)
}

// ExitCode is 1.
func (e *NotesError) ExitCode() int { return 1 }

// ReleaseNotes returns the section of a Markdown changelog for version: the
// heading whose first word is that version (compared as PEP 440 versions,
// so "0.3" and "v0.3.0" both match 0.3.0; a leading "v", brackets and a
// trailing date or title are allowed), and everything up to the next
// heading of the same or a higher level. Fenced code blocks are skipped when looking for
// headings.
func ReleaseNotes(file string, changelog []byte, version string) (string, error) {
	want, err := pep440.Parse(version)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.ReplaceAll(string(changelog), "\r\n", "\n"), "\n")
	start, level := -1, 0
	inFence := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") || strings.HasPrefix(strings.TrimSpace(l), "~~~") {
			inFence = !inFence
			continue
		}
		if inFence {
			continue
		}
		m := headingRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if start >= 0 {
			if len(m[1]) <= level {
				return section(lines[start:i]), nil
			}
			continue
		}
		vm := versionTokenRE.FindStringSubmatch(m[2])
		if vm == nil {
			continue
		}
		if v, err := pep440.Parse(vm[1]); err == nil && v.Compare(want) == 0 {
			start, level = i, len(m[1])
		}
	}
	if start < 0 {
		return "", &NotesError{File: file, Version: want.String()}
	}
	return section(lines[start:]), nil
}

func section(lines []string) string {
	s := strings.TrimSpace(strings.Join(lines, "\n"))
	return s + "\n"
}
