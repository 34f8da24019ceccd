package sanitize

import (
	"reflect"
	"testing"
)

// hostTests list, per host name, inputs and the offsets of every
// host-name finding in them (none: the input is clean).
var hostTests = []struct {
	host string
	in   string
	at   []int
}{
	// A short host name (shorter than five bytes) is found where it is
	// used as a host or as a folder name.
	{"ci", "/srv/ci/build", []int{5}},
	{"ci", "/srv/ci", []int{5}},
	{"ci", `"/srv/CI"`, []int{6}},
	{"ci", `C:\jobs\ci\x`, []int{8}},
	{"ci", `C:\\jobs\\ci\\x`, []int{10}},
	{"ci", "bob@ci:~$ make", []int{4}},
	{"ci", "{user}@ci:/srv", []int{7}},
	{"ci", "ssh://ci:22 and https://ci/x", []int{6, 24}},
	{"ci", "PATH=/opt/ci:/usr/bin", []int{10}},
	{"ci", "/ci/x", []int{1}},
	// … and not as a word of prose, inside a word or name, nor as the
	// first label of another domain.
	{"ci", "the ci job passed; CI=true; decision civic special", nil},
	{"ci", "/srv/ci-cache/x /srv/ci.log /srv/ci_x /srv/xci/ /srv/cix", nil},
	{"ci", "bob@ci.example.org @ci/pkg ci@x ci", nil},
	{"ci", "{host} /{host}/x", nil},
	// In binary data (an SQLite page's floats) the same bytes are
	// chance, not a name used as a host or a folder: found only in text.
	{"vm", "\x9c\x03/vm\x00\xff", nil},
	{"vm", "\x01\xe2a@vm\x81", nil},
	{"vm", "\x80/vm/x", nil},
	{"vm", "/srv/vm\x00", nil},
	{"vm", "x\x00/srv/vm/y", []int{7}},
	{"vm", "\x00\x00alice@vm:~$", []int{8}},
	// A short name spelled like a standard top-level folder is not found
	// as the first component of an absolute path.
	{"dev", "/dev/null file:///dev/shm \"/dev\" x=/dev/fd/0", nil},
	{"dev", "a dev build; dev-requirements.txt; /srv/dev.txt", nil},
	{"dev", "/srv/dev/x ~/dev/x ../dev/y bob@dev http://dev:8080/", []int{5, 13, 22, 32, 43}},
	// A common path component is only found as a host.
	{"build", "/src/build/lib /build/x", nil},
	{"build", "jenkins@build:~$ ssh://build/", []int{8, 23}},
	// A common machine name is no longer found in prose.
	{"ubuntu", "Ubuntu 22.04 (ubuntu-latest)", nil},
	{"ubuntu", "root@ubuntu:~# ls /srv/x/ubuntu/", []int{5}},
	// A dotted name: the full name anywhere as a whole name, its short
	// name where it is used as a host or folder name.
	{"ci.example.com", "connect to ci.example.com:443 from /srv/ci/x as bob@ci", []int{11, 40, 52}},
	{"ci.example.com", "the ci job; ci.example.community; xci.example.com", nil},
	// A distinctive name is found wherever it is a whole name, as before.
	{"alice-mbp", "ran on alice-mbp, alice-mbp.local and ALICE-MBP", []int{7, 18, 38}},
	{"mercury", "running on mercury.local (mercury)", []int{11, 26}},
	{"mercury", "mercury2 xmercury mercury-x", nil},
	{"builder-7f3a2c.internal", "/runs/builder-7f3a2c/x and builder-7f3a2c.internal", []int{6, 27}},
	// Names too short or generic to search.
	{"x", "x /x/ bob@x", nil},
	{"localhost", "localhost /localhost/ bob@localhost", nil},
}

func TestHostNames(t *testing.T) {
	for _, tc := range hostTests {
		t.Run(tc.host+" "+tc.in, func(t *testing.T) {
			s := Private{Host: tc.host}.Scanner()
			var want []Finding
			for _, at := range tc.at {
				want = append(want, Finding{File: "f", Offset: int64(at), Kind: KindHostName, Excerpt: HostPlaceholder})
			}
			for _, chunk := range append([]int{defaultChunk}, chunkSizes(len(tc.in))...) {
				if got := scanWith(t, s, tc.in, chunk); !reflect.DeepEqual(got, want) {
					t.Fatalf("Scan(%q) with host %q, chunk %d =\n%v\nwant\n%v", tc.in, tc.host, chunk, got, want)
				}
			}
		})
	}
}

// String replaces a short host name exactly where the Scanner finds it,
// also after the user name it follows has become {user}.
func TestPrivateStringShortHost(t *testing.T) {
	p := Private{User: "alice", Host: "ci.example.com"}
	for _, c := range []struct{ in, want string }{
		{"alice@ci:/srv/ci/x", "{user}@{host}:/srv/{host}/x"},
		{"ssh://ci.example.com/x and the ci job", "ssh://{host}/x and the ci job"},
		{"/dev/null /srv/ci.log", "/dev/null /srv/ci.log"},
	} {
		got := p.String(c.in)
		if got != c.want {
			t.Errorf("String(%q) = %q, want %q", c.in, got, c.want)
		}
		if again := p.String(got); again != got {
			t.Errorf("String(%q) = %q, not idempotent", got, again)
		}
		if fs := p.Scanner().scanString(got); len(fs) != 0 {
			t.Errorf("String(%q) = %q still holds %v", c.in, got, fs)
		}
	}
}
