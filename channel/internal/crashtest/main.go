// Command crashtest publishes one release into a channel, for the
// crash-safety test of package channel: built with the mkrelease_testhooks
// build tag, it kills itself with SIGKILL at the hook point named by
// MKRELEASE_TEST_CRASH_AT.
//
// Usage:
//
//	crashtest DEST PROJECT VERSION ASSET...
//
// It signs the channel's state with the test key "channel" of package
// testkey, which the channel's tests trust. It prints the result as JSON and exits 0, or prints the error and exits
// with the error's exit code (1 when it has none).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/mkrelease/mkrelease/channel"
	"github.com/mkrelease/mkrelease/internal/testkey"
)

func main() {
	if len(os.Args) < 5 {
		fmt.Fprintln(os.Stderr, "usage: crashtest DEST PROJECT VERSION ASSET...")
		os.Exit(2)
	}
	res, err := channel.Publish(context.Background(), os.Args[1], channel.Release{
		Project: os.Args[2], Version: os.Args[3], Assets: os.Args[4:], Signer: testkey.Signer("channel"),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		var coder interface{ ExitCode() int }
		if errors.As(err, &coder) {
			os.Exit(coder.ExitCode())
		}
		os.Exit(1)
	}
	out, _ := json.Marshal(res)
	fmt.Println(string(out))
}
