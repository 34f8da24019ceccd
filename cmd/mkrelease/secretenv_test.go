package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// secretProbe is a command of the scripts (secret_env.txtar): it takes
// mkrelease's secrets as Main does (unless its first argument is
// -no-take, the control), then prints the password it read, and whether
// its own /proc/self/environ and a child's environment hold it.
func secretProbe() {
	var s secrets
	if len(os.Args) < 2 || os.Args[1] != "-no-take" {
		s = takeSecrets()
	} else {
		s, _ = fromEnviron(os.Environ())
	}
	pw := s[passwordEnv]
	fmt.Printf("password=%s\n", pw)
	if runtime.GOOS == "linux" {
		environ, err := os.ReadFile("/proc/self/environ")
		if err != nil {
			fmt.Println("environ: unreadable:", err)
			os.Exit(1)
		}
		fmt.Printf("in /proc/self/environ: %v\n", pw != "" && bytes.Contains(environ, []byte(pw)))
	}
	out, err := exec.Command("env").Output()
	if err != nil {
		fmt.Println("child: env failed:", err)
		os.Exit(1)
	}
	fmt.Printf("in a child's environment: %v\n", pw != "" && strings.Contains(string(out), pw))
	os.Exit(0)
}
