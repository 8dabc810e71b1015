package sink

import (
	"fmt"
	"os"
	"sync"
	"syscall"
)

// Faults is told of every state a partition enters. It exists so the crash
// and freeze tests can stop the daemon at every step of both machines.
// Only a build with the `faults` tag reads them from the environment
// (FaultsFromEnv, faults_env.go): a release binary has no such switch.
type Faults interface {
	Enter(s State)
}

// CrashAt kills the process with SIGKILL the n-th time any partition enters
// state; no deferred code, flush or cleanup runs, exactly as with kill -9.
// With Freeze set it sends SIGSTOP instead: the process stops where it is,
// as a long GC pause or a frozen VM would, until someone sends SIGCONT.
type CrashAt struct {
	State  State
	N      int
	Freeze bool

	mu   sync.Mutex
	seen int
}

// Enter counts entries into the watched state and acts on the n-th.
func (c *CrashAt) Enter(s State) {
	if s != c.State {
		return
	}
	c.mu.Lock()
	c.seen++
	hit := c.seen == c.N
	c.mu.Unlock()
	if !hit {
		return
	}
	if c.Freeze {
		fmt.Fprintf(os.Stderr, "hdfs-sink: fault injection: SIGSTOP at %s (#%d)\n", s, c.N)
		FreezeSelf() // returns once continued
		return
	}
	fmt.Fprintf(os.Stderr, "hdfs-sink: fault injection: SIGKILL at %s (#%d)\n", s, c.N)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never returns: the signal is on its way
}
