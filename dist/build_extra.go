package dist

// ArchiveOf returns the base name of the archive that holds the one root
// folder root (root → root.tar.gz): the inverse of [ArchiveRoot]. A
// bundle's checker names the archive after the root folder it found, not
// after the name the release would give it.
func ArchiveOf(root string) string { return root + archiveExt }
