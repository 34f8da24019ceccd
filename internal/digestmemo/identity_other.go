//go:build !linux && !darwin

package digestmemo

// identity is unknown here: every file is hashed each time.
func identity(string) (string, bool) { return "", false }
