// Command mkrelease is a reproducible release and packaging toolchain for
// native backends shipped as Python wheels. See README.md.
package main

import "os"

func main() { os.Exit(Main()) }
