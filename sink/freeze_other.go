//go:build !linux

package sink

import (
	"os"
	"syscall"
)

// FreezeSelf stops the process (SIGSTOP) and returns once continued. Off
// Linux the signal goes to the process: other threads may run a moment
// longer (see freeze_linux.go), which only the fault tests care about.
func FreezeSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGSTOP)
}
