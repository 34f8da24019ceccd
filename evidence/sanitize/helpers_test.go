package sanitize

import "strings"

// testPrivate is the private values of an imaginary machine: alice's
// laptop, with a run's venv in the temporary folder and a scratch folder
// elsewhere.
func testPrivate() Private {
	return Private{
		Home: "/home/alice",
		User: "alice",
		Host: "alice-mbp",
		Temp: "/tmp",
		Folders: map[string]string{
			"/tmp/mk-1/venv":    "{venv}",
			"/srv/scratch/mk-1": "{work}",
		},
	}
}

// chars returns n letters and digits, a deterministic stand-in for a
// token's random part. Tokens are assembled at run time from their prefix
// and such a body, so no credential-shaped literal sits in the source.
func chars(n int, seed byte) string {
	const set = "aB3dE5gH7jK9mN1pQ2rS4tU6vW8xY0zC"
	var b strings.Builder
	for i := range n {
		b.WriteByte(set[(i*7+int(seed))%len(set)])
	}
	return b.String()
}

// filler is clean text put before a case so that chunk boundaries fall at
// every position of the match.
func filler() string { return strings.Repeat("lorem ipsum dolor; ", 12) }

// normalised returns s as the normaliser turns it.
func normalised(s string) string {
	var out []byte
	n := normaliser{emit: func(seg []byte) { out = append(out, seg...) }}
	n.write([]byte(s))
	n.close()
	return string(out)
}
