package part

// Test helpers for the external tests of package part_test.
var (
	MakePart     = makePart
	MakePartWith = makePartWith
	DevKey       = devKey
	TestConfig   = testConfig
)

// Digests of the configuration the test parts are built from.
const (
	TOMLSHA = tomlSHA
	LockSHA = lockSHA
)
