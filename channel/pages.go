package channel

import (
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
)

// page is a generated file of a generation: its slash path and bytes.
type page struct {
	name string
	data []byte
}

// wheelLink is a wheel as the index pages show it.
type wheelLink struct {
	version string
	w       Wheel
	sha256  string
}

// assetPath is the slash path of a version's file in the channel.
func assetPath(version, name string) string {
	return ReleasesDir + "/" + version + "/" + name
}

// hrefPath renders a slash path as a relative URL path, each segment
// percent-escaped.
func hrefPath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

// wheelLinks lists every wheel of s with its digest, by project, then
// version (ascending), then file name.
func wheelLinks(s *State) []wheelLink {
	var out []wheelLink
	for _, v := range s.Versions {
		for _, w := range v.Wheels {
			l := wheelLink{version: v.Version, w: w}
			for _, a := range v.Assets {
				if a.Name == w.File {
					l.sha256 = a.SHA256
				}
			}
			out = append(out, l)
		}
	}
	return out
}

// projects lists the distinct projects of s's wheels, sorted.
func projects(s *State) []string {
	var out []string
	for _, l := range wheelLinks(s) {
		out = append(out, l.w.Project)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// pages renders every page of a generation holding s, channel.json last.
func pages(s *State) ([]page, error) {
	links := wheelLinks(s)
	projs := projects(s)
	var out []page
	var root []string
	for _, p := range projs {
		root = append(root, anchor(p+"/", p, nil))
	}
	out = append(out, page{SimpleDir + "/index.html", htmlPage("Simple index", root)})
	for _, p := range projs {
		var as []string
		for _, l := range links {
			if l.w.Project == p {
				as = append(as, wheelAnchor("../../", l))
			}
		}
		out = append(out, page{SimpleDir + "/" + p + "/index.html", htmlPage("Links for "+p, as)})
	}
	var fl []string
	for _, l := range links {
		fl = append(fl, wheelAnchor("", l))
	}
	out = append(out, page{FindLinksFile, htmlPage("Wheels of "+s.Project, fl)})
	out = append(out, page{IndexFile, indexPage(s)})
	state, err := s.marshal()
	if err != nil {
		return nil, err
	}
	return append(out, page{StateFile, state}), nil
}

// anchor renders <a href="HREF" k="v"...>TEXT</a>, HTML-escaping every
// attribute value and the text; attrs are name, value pairs in order.
func anchor(href, text string, attrs []string) string {
	var b strings.Builder
	b.WriteString(`<a href="` + html.EscapeString(href) + `"`)
	for i := 0; i+1 < len(attrs); i += 2 {
		b.WriteString(" " + attrs[i] + `="` + html.EscapeString(attrs[i+1]) + `"`)
	}
	b.WriteString(">" + html.EscapeString(text) + "</a>")
	return b.String()
}

// wheelAnchor renders a wheel's link for a page at prefix from the root.
func wheelAnchor(prefix string, l wheelLink) string {
	var attrs []string
	if l.w.RequiresPython != "" {
		attrs = append(attrs, "data-requires-python", l.w.RequiresPython)
	}
	meta := "sha256=" + l.w.MetadataSHA256
	attrs = append(attrs, "data-dist-info-metadata", meta, "data-core-metadata", meta)
	return anchor(prefix+hrefPath(assetPath(l.version, l.w.File))+"#sha256="+l.sha256, l.w.File, attrs)
}

// htmlPage renders a PEP 503 page: one anchor per line.
func htmlPage(title string, anchors []string) []byte {
	var b strings.Builder
	t := html.EscapeString(title)
	b.WriteString("<!DOCTYPE html>\n<html>\n<head>\n")
	b.WriteString(`<meta name="pypi:repository-version" content="1.0">` + "\n")
	fmt.Fprintf(&b, "<title>%s</title>\n</head>\n<body>\n<h1>%s</h1>\n", t, t)
	for _, a := range anchors {
		b.WriteString(a + "<br>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}

// indexPage renders the root page for people: the indexes, then every
// version, newest first, with its assets.
func indexPage(s *State) []byte {
	var b strings.Builder
	t := html.EscapeString(s.Project + " releases")
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n</head>\n<body>\n<h1>%s</h1>\n", t, t)
	b.WriteString("<p>pip: <code>--index-url URL/simple/</code> (" + anchor(SimpleDir+"/", "simple index", nil) +
		") or <code>--find-links URL/find-links.html</code> (" + anchor(FindLinksFile, "find-links page", nil) +
		"); state: " + anchor(StateFile, StateFile, nil) + "</p>\n")
	for _, v := range slices.Backward(s.Versions) {
		ver := html.EscapeString(v.Version)
		fmt.Fprintf(&b, "<h2 id=\"v%s\">%s</h2>\n<ul>\n", ver, ver)
		for _, a := range v.Assets {
			b.WriteString("<li>" + anchor(hrefPath(assetPath(v.Version, a.Name))+"#sha256="+a.SHA256, a.Name, nil) + "</li>\n")
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}

// link is an anchor read back from a page.
type link struct {
	href  string
	attrs map[string]string
	text  string
}

// parseLinks reads the anchors of a page this package wrote: each
// `<a href="…" name="value"…>text</a>` with double-quoted attribute values.
// Anything else inside an <a> tag is an error.
func parseLinks(data []byte) ([]link, error) {
	s := string(data)
	var out []link
	for {
		i := strings.Index(s, "<a ")
		if i < 0 {
			return out, nil
		}
		s = s[i+len("<a "):]
		tag, rest, ok := strings.Cut(s, ">")
		if !ok {
			return nil, fmt.Errorf("unterminated <a> tag")
		}
		text, after, ok := strings.Cut(rest, "</a>")
		if !ok {
			return nil, fmt.Errorf("<a %s> is not closed", tag)
		}
		s = after
		l := link{attrs: map[string]string{}, text: html.UnescapeString(text)}
		for rest := strings.TrimSpace(tag); rest != ""; rest = strings.TrimLeft(rest, " ") {
			name, value, ok := strings.Cut(rest, "=\"")
			if !ok || name == "" || strings.ContainsAny(name, " \"") {
				return nil, fmt.Errorf("<a %s>: attributes must be name=\"value\"", tag)
			}
			value, rest, ok = strings.Cut(value, "\"")
			if !ok {
				return nil, fmt.Errorf("<a %s>: unterminated attribute %s", tag, name)
			}
			if _, dup := l.attrs[name]; dup {
				return nil, fmt.Errorf("<a %s>: attribute %s twice", tag, name)
			}
			l.attrs[name] = html.UnescapeString(value)
		}
		href, ok := l.attrs["href"]
		if !ok {
			return nil, fmt.Errorf("<a %s> has no href", tag)
		}
		l.href = href
		out = append(out, l)
	}
}
