package channel

// canPublish refuses to publish on Windows. A channel changes in one step
// by renaming a new symbolic link over DEST (see the package doc); Windows
// cannot rename a link onto an existing directory link, and creating links
// needs a privilege (or Developer Mode) most accounts lack, so a publish
// there could not be atomic. Auditing a channel (Verify) works.
func canPublish(dest string) error {
	return &UsageError{Msg: "channel " + dest + ": publishing is not supported on Windows (a publish renames a symbolic link over DEST in one step, which Windows cannot do); publish from Linux or macOS; `mkrelease verify " + dest + "` works here"}
}
