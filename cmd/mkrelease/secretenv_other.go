//go:build !linux

package main

import "os"

// takeSecrets takes mkrelease's secrets out of its environment, so that
// the processes it starts do not inherit them. (On Linux it also makes
// them unreadable in /proc; elsewhere the environment a process started
// with stays readable to the same user's tools, such as ps eww on macOS.)
func takeSecrets() secrets {
	s, _ := fromEnviron(os.Environ())
	unsetSecrets()
	return s
}
