//go:build faults

package main

import (
	"os"
	"strings"
	"syscall"
)

// compactCrashAt is the fault point of the real-service tests: the process
// SIGKILLs itself as the named step begins ("C3" or "C3 publish"), as a
// crash there would end it. Only in builds with -tags faults.
func compactCrashAt(step string) func(string) {
	return func(s string) {
		if step != "" && strings.HasPrefix(s, step) {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
}
