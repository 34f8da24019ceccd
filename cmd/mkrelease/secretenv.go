package main

import (
	"os"
	"strings"
)

// secretVars are the variables that hold mkrelease's own secrets: taken
// out of its environment when it starts ([takeSecrets]), so that no
// process it starts inherits them and, on Linux, no reader of
// /proc/PID/environ finds them; mkrelease reads them through its Factory.
var secretVars = []string{passwordEnv}

// secretFDVar names, in a mkrelease that re-executed itself, the
// descriptor its secrets come on (Linux, secretenv_linux.go).
const secretFDVar = "MKRELEASE_SECRET_FD"

// secrets are the values of secretVars mkrelease started with.
type secrets map[string]string

// lookupEnv reads the variable k: a secret from s, anything else through
// lookup.
func (s secrets) lookupEnv(lookup func(string) (string, bool)) func(string) (string, bool) {
	return func(k string) (string, bool) {
		if v, ok := s[k]; ok {
			return v, true
		}
		return lookup(k)
	}
}

// getenv reads the variable k: a secret from s, anything else through
// getenv.
func (s secrets) getenv(getenv func(string) string) func(string) string {
	return func(k string) string {
		if v, ok := s[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// fromEnviron takes the secrets out of environ, returning them and the
// rest.
func fromEnviron(environ []string) (secrets, []string) {
	s := secrets{}
	rest := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if isSecretVar(k) {
			s[k] = v
			continue
		}
		rest = append(rest, kv)
	}
	return s, rest
}

func isSecretVar(k string) bool {
	for _, s := range secretVars {
		if k == s {
			return true
		}
	}
	return false
}

// unsetSecrets removes the secret variables from this process's
// environment (what the processes it starts inherit).
func unsetSecrets() {
	for _, k := range secretVars {
		os.Unsetenv(k)
	}
}
