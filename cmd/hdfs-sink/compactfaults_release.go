//go:build !faults

package main

// compactCrashAt is no fault point in a release build: the switch exists
// only with -tags faults.
func compactCrashAt(string) func(string) { return nil }
