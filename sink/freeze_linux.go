package sink

import (
	"runtime"
	"syscall"
)

// FreezeSelf stops the whole process (SIGSTOP) before the calling goroutine
// runs another instruction, and returns once someone sends SIGCONT.
//
// kill(getpid(), SIGSTOP) is not enough: the kernel hands a process-directed
// signal to the main thread, and until that thread runs and stops the
// others, the caller's thread goes on. A fault injected "before the rename"
// then sent the rename to the NameNode first (TestWALInspectMidCommit saw
// the file committed under a frozen daemon). Sent to the calling thread
// itself, the stop is taken on that thread's way back from the syscall.
func FreezeSelf() {
	runtime.LockOSThread() // the tid below stays the caller's thread
	defer runtime.UnlockOSThread()
	syscall.Tgkill(syscall.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
}
