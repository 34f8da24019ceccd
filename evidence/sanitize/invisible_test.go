package sanitize

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// invisibles are characters that render as nothing, by name.
var invisibles = []struct {
	name string
	r    rune
}{
	{"zero width space", 0x200B}, {"zero width non-joiner", 0x200C}, {"zero width joiner", 0x200D},
	{"left-to-right mark", 0x200E}, {"right-to-left mark", 0x200F}, {"word joiner", 0x2060},
	{"invisible times", 0x2062}, {"invisible plus", 0x2064}, {"byte order mark", 0xFEFF},
	{"soft hyphen", 0x00AD}, {"left-to-right embedding", 0x202A}, {"right-to-left override", 0x202E},
	{"left-to-right isolate", 0x2066}, {"pop directional isolate", 0x2069}, {"arabic letter mark", 0x061C},
	{"tag latin capital a", 0xE0041}, {"variation selector 16", 0xFE0F}, {"mongolian vowel separator", 0x180E},
	{"combining grapheme joiner", 0x034F}, {"hangul filler", 0x3164}, {"variation selector 17", 0xE0100},
}

func TestIsInvisible(t *testing.T) {
	for _, c := range invisibles {
		if !isInvisible(c.r) {
			t.Errorf("isInvisible(%U %s) = false", c.r, c.name)
		}
		if got := normalised("x" + string(c.r) + "y"); got != "xy" {
			t.Errorf("normalised x%Uy (%s) = %q, want %q", c.r, c.name, got, "xy")
		}
	}
	for _, r := range []rune{'a', ' ', 0xA0 /* no-break space: a visible gap */, 0xE9, 0x2028, 0x4E00, 0x1F600, utf8.RuneError} {
		if isInvisible(r) {
			t.Errorf("isInvisible(%U) = true", r)
		}
		if in := "x" + string(r) + "y"; r != 0xA0 && normalised(in) != in {
			t.Errorf("normalised x%Uy = %q, want it unchanged", r, normalised(in))
		}
	}
}

// splitCase is an input and its exact findings (all in file "f").
type splitCase struct {
	name string
	in   string
	want []Finding
	// secret must not show in any excerpt.
	secret string
}

// split inserts inv into s after every k-th byte (k > 0).
func split(s, inv string, k int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += k {
		if i > 0 {
			b.WriteString(inv)
		}
		b.WriteString(s[i:min(len(s), i+k)])
	}
	return b.String()
}

func splitCases() []splitCase {
	var cs []splitCase
	// A credential split by invisible characters is found in the
	// normalised text; one beside them in the bytes as they are.
	const removed = "invisible characters removed"
	f := func(off int, kind, excerpt string) []Finding {
		return []Finding{{File: "f", Offset: int64(off), Kind: kind, Excerpt: excerpt, Decoded: removed}}
	}
	raw := func(off int, kind, excerpt string) []Finding {
		return []Finding{{File: "f", Offset: int64(off), Kind: kind, Excerpt: excerpt}}
	}
	gh := "gh" + "p_" + chars(36, 1)
	// Every invisible character, inside a GitHub token's body.
	for _, c := range invisibles {
		inv := string(c.r)
		cs = append(cs, splitCase{name: "github token split by " + c.name,
			in: "GITHUB_TOKEN=" + gh[:14] + inv + gh[14:] + "\n", want: f(13, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]})
	}
	zw := "\u200b"
	key, _ := pemBlock("RSA PRIVATE KEY")
	aws := "AKIA" + strings.ToUpper(chars(16, 3))
	awsSecret := chars(20, 4) + "/+" + chars(18, 5)
	fine := "github" + "_pat_" + chars(22, 6) + "_" + chars(59, 7)
	gl := "glpat" + "-" + chars(20, 8)
	slack := "xoxb" + "-123456789012-1234567890123-" + chars(24, 9)
	google := "AIza" + "Sy" + chars(33, 11)
	npm := "npm" + "_" + chars(36, 14)
	pypi := "pypi" + "-AgEIcHlwaS5vcmc" + chars(60, 15)
	bearer := "Bearer " + "eyJhbGciOiJIUzI1NiJ9." + chars(30, 12)
	cs = append(cs,
		splitCase{name: "inside the prefix", in: "t=" + gh[:2] + "\u200c" + gh[2:], want: f(2, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]},
		splitCase{name: "every fourth byte", in: "x " + split(gh, zw, 4), want: f(2, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]},
		splitCase{name: "a run of invisible characters", in: gh[:6] + "\u200b\u200c\u200d\u2060\ufeff" + gh[6:], want: f(0, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]},
		// Offsets count the bytes of the invisible characters before the token.
		splitCase{name: "offset after invisible characters", in: zw + zw + "id: " + zw + gh[:9] + zw + gh[9:],
			want: f(3*3+4, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]},
		splitCase{name: "private key header with soft hyphens", in: `{"k": "` + strings.Replace(key, "PRIVATE", "PRI\u00adVATE", 1) + `"}`,
			want: f(7, KindPrivateKey, "-----BEGIN RSA PRIVATE KEY-----")},
		splitCase{name: "private key header with a bidi override", in: strings.Replace(key, "-----BEGIN", "---\u202e--BEGIN", 1),
			want: f(0, KindPrivateKey, "-----BEGIN RSA PRIVATE KEY-----")},
		splitCase{name: "aws key id", in: "id=" + aws[:8] + "\u200d" + aws[8:] + "\n", want: f(3, KindAWSAccessKeyID, "AKIA[redacted]"), secret: aws[4:]},
		splitCase{name: "aws secret", in: "aws_secret_access_key = " + awsSecret[:20] + "\u2062" + awsSecret[20:] + "\n",
			want: f(0, KindAWSSecretKey, "aws_secret_access_key=[redacted]"), secret: awsSecret},
		splitCase{name: "fine-grained github token", in: fine[:30] + "\ufe0f" + fine[30:], want: f(0, KindGitHubToken, "github_pat_[redacted]"), secret: fine[11:]},
		splitCase{name: "gitlab token", in: "PRIVATE-TOKEN: " + gl[:10] + "\u2066" + gl[10:] + "\u2069", want: f(15, KindGitLabToken, "glpat-[redacted]"), secret: gl[6:]},
		splitCase{name: "slack token", in: split(slack, "\u200e", 9), want: f(0, KindSlackToken, "xoxb-[redacted]"), secret: slack[29:]},
		splitCase{name: "google api key", in: "key=" + google[:20] + "\U000e0041" + google[20:] + "&q=1", want: f(4, KindGoogleAPIKey, "AIza[redacted]"), secret: google[4:]},
		splitCase{name: "npm token", in: npm[:3] + "\u180e" + npm[3:], want: f(0, KindNPMToken, "npm_[redacted]"), secret: npm[4:]},
		splitCase{name: "pypi token", in: "password = " + split(pypi, "\u034f", 16), want: f(11, KindPyPIToken, "pypi-AgEIcHlwaS5vcmc[redacted]"), secret: pypi[20:]},
		splitCase{name: "bearer token", in: "Authorization: " + bearer[:6] + zw + bearer[6:30] + zw + bearer[30:],
			want: f(15, KindBearerToken, "Bearer [redacted]"), secret: bearer[28:]},
		splitCase{name: "two split tokens", in: split(gh, zw, 10) + " and " + split(npm, zw, 10),
			want: []Finding{
				{File: "f", Offset: 0, Kind: KindGitHubToken, Excerpt: "ghp_[redacted]", Decoded: removed},
				{File: "f", Offset: int64(len(split(gh, zw, 10)) + 5), Kind: KindNPMToken, Excerpt: "npm_[redacted]", Decoded: removed},
			}, secret: npm[4:]},
		// An invisible character beside a whole token: the token is found
		// as it is, once.
		splitCase{name: "invisible character before a token", in: "x" + zw + gh, want: raw(4, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]},
		splitCase{name: "invisible character after a token", in: gh + zw + "x", want: raw(0, KindGitHubToken, "ghp_[redacted]"), secret: gh[4:]},
		splitCase{name: "invisible characters around an aws key id", in: "id" + zw + aws + zw + "x", want: raw(5, KindAWSAccessKeyID, "AKIA[redacted]"), secret: aws[4:]},
		// Not credentials once the invisible characters are out.
		splitCase{name: "inside a word", in: "x" + split(gh, zw, 3)},
		splitCase{name: "too short", in: split(gh[:len(gh)-1], zw, 5) + " "},
		splitCase{name: "prose", in: "zero\u200bwidth \u00adsoft hy\u00adphen \ufeffbom \u202eevil\u202c 👨\u200d👩\u200d👧 ok"},
		splitCase{name: "an aws key id made too long", in: split(aws+"X", zw, 7)},
	)
	return cs
}

// TestScanFindsSplitCredentials: a credential split by invisible
// characters is found at the offset of its first byte in the file, at
// every chunk size (so with a chunk boundary at every position), and the
// excerpt discloses nothing.
func TestScanFindsSplitCredentials(t *testing.T) {
	s := testPrivate().Scanner()
	for _, c := range splitCases() {
		t.Run(c.name, func(t *testing.T) {
			want := c.want
			if want == nil {
				want = []Finding(nil)
			}
			for _, chunk := range append([]int{defaultChunk}, chunkSizes(len(c.in))...) {
				if got := scanWith(t, s, c.in, chunk); !reflect.DeepEqual(got, want) {
					t.Fatalf("Scan(%q) with chunk %d =\n%v\nwant\n%v", c.in, chunk, got, want)
				}
			}
			// scanString (entry names, recorded values) agrees.
			got := s.scanString(c.in)
			for i := range got {
				got[i].File = "f"
			}
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("scanString(%q) =\n%v\nwant\n%v", c.in, got, want)
			}
			for _, fd := range want {
				checkRedacted(t, c.secret, fd.String())
			}
		})
	}
}

// A long file: split credentials far from the start, among many invisible
// characters, keep exact offsets, and findings stay in order.
func TestScanSplitLargeFile(t *testing.T) {
	gh := "gh" + "p_" + chars(36, 2)
	npm := "npm" + "_" + chars(36, 3)
	var b strings.Builder
	for b.Len() < 3*defaultChunk {
		b.WriteString("lorem\u200b ipsum \ufeffdolor; ")
	}
	off1 := b.Len()
	b.WriteString(split(gh, "\u200b", 5))
	b.WriteString(" /home/bob/x ")
	off2 := b.Len() - len("/home/bob/x ")
	for b.Len() < 5*defaultChunk+7 {
		b.WriteString("\u00ad")
	}
	off3 := b.Len()
	b.WriteString(split(npm, "\u2060", 3))
	got := scanWith(t, Private{}.Scanner(), b.String(), defaultChunk)
	want := []Finding{
		{File: "f", Offset: int64(off1), Kind: KindGitHubToken, Excerpt: "ghp_[redacted]", Decoded: "invisible characters removed"},
		{File: "f", Offset: int64(off2), Kind: KindHomePath, Excerpt: "/home/[redacted]"},
		{File: "f", Offset: int64(off3), Kind: KindNPMToken, Excerpt: "npm_[redacted]", Decoded: "invisible characters removed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// ScanTree names the file and the offset of a split credential, in a file
// and in an entry's name.
func TestScanTreeSplitCredential(t *testing.T) {
	root := t.TempDir()
	gh := "gh" + "p_" + chars(36, 4)
	content := "ok\ntoken: " + split(gh, "\u200b", 8) + "\n"
	if err := os.MkdirAll(filepath.Join(root, "lane"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "lane", "log.txt"), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "lane", split(gh, "\u200d", 20)), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := testPrivate().Scanner().ScanTree(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []Finding{
		{File: "lane/" + split(gh, "\u200d", 20), Offset: -1, Kind: KindGitHubToken, Excerpt: "name: ghp_[redacted]"},
		{File: "lane/log.txt", Offset: 10, Kind: KindGitHubToken, Excerpt: "ghp_[redacted]", Decoded: "invisible characters removed"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ScanTree =\n%v\nwant\n%v", got, want)
	}
}

// A recorded environment value holding a split credential is redacted.
func TestEnvRedactsSplitCredential(t *testing.T) {
	gh := "gh" + "p_" + chars(36, 5)
	got := testPrivate().Env(map[string]string{"VEXL_TOKEN": split(gh, "\u200b", 6)}, "VEXL_TOKEN")
	if want := map[string]string{"VEXL_TOKEN": Redacted}; !reflect.DeepEqual(got, want) {
		t.Errorf("Env = %v, want %v", got, want)
	}
}

// The collector keeps one finding per offset and kind (the one of the
// lowest priority), in offset order, and counts what is past maxFindings.
func TestCollector(t *testing.T) {
	c := collector{name: "f"}
	for i := range maxFindings + 3 {
		c.add(int64(10*i), int64(10*i+8), KindHomePath, "/home/[redacted]", "", prioRaw)
	}
	c.add(5, 45, KindGitHubToken, "ghp_[redacted]", "base64", prioRun)
	c.add(10, 18, KindHomePath, "/home/[redacted]", "escape sequences decoded", prioNormalised) // raw's: kept once
	c.add(9, 18, KindHomePath, "/home/[redacted]", "escape sequences decoded", prioNormalised)  // covers raw's at 10: left out
	c.add(5, 45, KindGitHubToken, "ghp_[redacted]", "", prioRaw)                                // replaces the decoded one
	got := c.result()
	if len(got) != maxFindings+1 {
		t.Fatalf("%d findings, want %d", len(got), maxFindings+1)
	}
	if got[0].Offset != 0 || got[1].Offset != 5 || got[1].Decoded != "" || got[2].Offset != 10 || got[2].Decoded != "" || got[3].Offset != 20 {
		t.Errorf("first findings %v", got[:4])
	}
	// 104 findings: 100 listed, 990 is the first of the 4 past the limit.
	last := got[maxFindings]
	want := Finding{File: "f", Offset: 990, Kind: KindTruncated, Excerpt: "4 more findings from here on are not listed"}
	if last != want {
		t.Errorf("last finding %v, want %v", last, want)
	}
}
