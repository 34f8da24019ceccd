// Package evidence holds the raw records verifier lanes produce (cases and
// crossover measurements) and the names of evidence files; the lane
// runner, statistics, sanitiser, store and packer live in its
// sub-packages.
package evidence
