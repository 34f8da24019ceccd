package attest

import (
	"regexp"
	"testing"
)

func TestInvocationIDIsAnRFC9562UUID(t *testing.T) {
	uuid := regexp.MustCompile(`^urn:uuid:[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 64 {
		id := InvocationID(func(string) string { return "" })
		if !uuid.MatchString(id) {
			t.Fatalf("%q is not a version 4 UUID URN", id)
		}
		if seen[id] {
			t.Fatalf("%q twice", id)
		}
		seen[id] = true
	}
	gh := map[string]string{"GITHUB_ACTIONS": "true", "GITHUB_RUN_ID": "7", "GITHUB_RUN_ATTEMPT": "2",
		"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "o/r"}
	if got := InvocationID(func(k string) string { return gh[k] }); got != "https://github.com/o/r/actions/runs/7/attempts/2" {
		t.Errorf("GitHub run: %s", got)
	}
}
