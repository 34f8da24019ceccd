package wheel_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mkrelease/mkrelease/wheel"
)

func TestParseMetadata(t *testing.T) {
	in := "Metadata-Version: 2.1\r\n" +
		"Name: Demo.Pkg\r\n" +
		"version: 1.0\r\n" + // field names ignore case
		"Summary:   padded  \r\n" +
		"License: First line\r\n" +
		"        second line\r\n" +
		"          indented more\r\n" +
		"Requires-Dist: a>=1\r\n" +
		"Requires-Dist: b; extra == \"x\"\r\n" +
		"Provides-Extra: x\r\n" +
		"Classifier: A :: B\r\n" +
		"Project-URL: Home, https://example.invalid\r\n" +
		"Keywords: one, two ,,three\r\n" +
		"License-File: LICENSE\r\n" +
		"License-File: sub/NOTICE\r\n" +
		"Requires-Python: >=3.8\r\n" +
		"Description-Content-Type: text/x-rst\r\n" +
		"\r\n" +
		"Body line 1\r\n\r\nBody: not a field\r\n"
	m, err := wheel.ParseMetadata([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %q, want %q", what, got, want)
		}
	}
	check("MetadataVersion", m.MetadataVersion, "2.1")
	check("Name", m.Name, "Demo.Pkg")
	check("Version", m.Version, "1.0")
	check("Summary", m.Summary, "padded")
	check("License", m.License, "First line\nsecond line\n  indented more")
	check("RequiresPython", m.RequiresPython, ">=3.8")
	check("DescriptionContentType", m.DescriptionContentType, "text/x-rst")
	check("Description", m.Description, "Body line 1\r\n\r\nBody: not a field\r\n")
	lists := []struct {
		what      string
		got, want []string
	}{
		{"RequiresDist", m.RequiresDist, []string{"a>=1", `b; extra == "x"`}},
		{"ProvidesExtra", m.ProvidesExtra, []string{"x"}},
		{"Classifiers", m.Classifiers, []string{"A :: B"}},
		{"ProjectURLs", m.ProjectURLs, []string{"Home, https://example.invalid"}},
		{"Keywords", m.Keywords, []string{"one", "two", "three"}},
		{"LicenseFiles", m.LicenseFiles, []string{"LICENSE", "sub/NOTICE"}},
		{"Values(requires-dist)", m.Values("requires-dist"), []string{"a>=1", `b; extra == "x"`}},
	}
	for _, l := range lists {
		if !slices.Equal(l.got, l.want) {
			t.Errorf("%s = %q, want %q", l.what, l.got, l.want)
		}
	}
	if len(m.Fields) != 15 || m.Fields[2] != [2]string{"version", "1.0"} {
		t.Errorf("Fields = %q", m.Fields)
	}
	if m.Values("Absent") != nil {
		t.Errorf("Values(Absent) = %q", m.Values("Absent"))
	}
}

func TestParseMetadataDescriptionHeader(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"pipe convention", "Description: Line one\n       |\n       |  indented\n       |last\n", "Line one\n\n  indented\nlast"},
		{"rfc822_escape", "Description: Line one\n        | table |\n        line three\n", "Line one\n| table |\nline three"},
		{"body wins", "Description: header\n\nbody\n", "body\n"},
		{"blank body keeps header", "Description: header\n\n  \n", "header"},
		{"no description", "Name: x\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := wheel.ParseMetadata([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if m.Description != tt.want {
				t.Errorf("Description = %q, want %q", m.Description, tt.want)
			}
		})
	}
}

func TestParseMetadataWheelFile(t *testing.T) {
	m, err := wheel.ParseMetadata([]byte("Wheel-Version: 1.0\nGenerator: x 1\nRoot-Is-Purelib: false\nTag: cp312-cp312-linux_x86_64\nTag: cp312-abi3-linux_x86_64\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Values("tag"); !slices.Equal(got, []string{"cp312-cp312-linux_x86_64", "cp312-abi3-linux_x86_64"}) {
		t.Errorf("Tag = %q", got)
	}
	if got := m.Values("Root-Is-Purelib"); !slices.Equal(got, []string{"false"}) {
		t.Errorf("Root-Is-Purelib = %q", got)
	}
}

func TestParseMetadataErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		line int
	}{
		{"not UTF-8", "Name: \xff\n", 0},
		{"byte order mark", "\uFEFFName: x\n", 1},
		{"continuation first", " Name: x\n", 1},
		{"no colon", "Name: x\nnot a header\n", 2},
		{"empty field name", "Name: x\n: value\n", 2},
		{"space in field name", "Name: x\nBad Name: y\n", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := wheel.ParseMetadata([]byte(tt.in))
			var se *wheel.MetadataSyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("err = %v, want a *MetadataSyntaxError", err)
			}
			if se.Line != tt.line {
				t.Errorf("line = %d, want %d (%v)", se.Line, tt.line, err)
			}
		})
	}
}

func TestParseMetadataEmpty(t *testing.T) {
	for _, in := range []string{"", "\n", "\r\n\r\n"} {
		m, err := wheel.ParseMetadata([]byte(in))
		if err != nil || len(m.Fields) != 0 {
			t.Errorf("ParseMetadata(%q) = %+v, %v", in, m, err)
		}
	}
}

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte(chkMetadata))
	f.Add([]byte(chkWheelFile))
	f.Add([]byte("Description: a\n       |b\n\tc\n\nbody"))
	f.Add([]byte("A:\n \n\t\n:"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := wheel.ParseMetadata(data)
		if err != nil {
			if m != nil {
				t.Fatal("metadata and error")
			}
			return
		}
		if !utf8.Valid(data) {
			t.Fatal("accepted invalid UTF-8")
		}
		for _, fl := range m.Fields {
			if fl[0] == "" || strings.ContainsAny(fl[0], ": \t\r\n") {
				t.Fatalf("bad field name %q", fl[0])
			}
			if got := m.Values(fl[0]); len(got) == 0 {
				t.Fatalf("Values(%q) empty", fl[0])
			}
		}
	})
}
