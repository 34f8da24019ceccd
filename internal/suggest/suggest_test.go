package suggest

import "testing"

func TestClosest(t *testing.T) {
	keys := []string{"name", "version", "summary", "license"}
	for word, want := range map[string]string{"nmae": "name", "verion": "version", "licence": "license", "zzz": "", "": ""} {
		if got := Closest(word, keys); got != want {
			t.Errorf("Closest(%q) = %q, want %q", word, got, want)
		}
	}
	for _, tc := range []struct {
		a, b  string
		limit int
		want  int
	}{{"kitten", "sitting", 10, 3}, {"", "abc", 10, 3}, {"same", "same", 10, 0}, {"a", "abcdef", 3, 3}} {
		if got := Distance(tc.a, tc.b, tc.limit); got != tc.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", tc.a, tc.b, tc.limit, got, tc.want)
		}
	}
}
