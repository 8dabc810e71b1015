package sink

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Faults decides whether the process dies on entering a state. It exists so
// the crash tests can kill the daemon at every step of both machines.
type Faults interface {
	Enter(s State)
}

// CrashAt kills the process with SIGKILL the n-th time any partition enters
// state; no deferred code, flush or cleanup runs, exactly as with kill -9.
type CrashAt struct {
	State State
	N     int

	mu   sync.Mutex
	seen int
}

// Enter counts entries into the watched state and kills the process on the n-th.
func (c *CrashAt) Enter(s State) {
	if s != c.State {
		return
	}
	c.mu.Lock()
	c.seen++
	hit := c.seen == c.N
	c.mu.Unlock()
	if hit {
		fmt.Fprintf(os.Stderr, "hdfs-sink: fault injection: SIGKILL at %s (#%d)\n", s, c.N)
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // never returns: the signal is on its way
	}
}

// FaultsFromEnv reads HDFS_SINK_CRASH_AT=STATE[:N] (N defaults to 1).
func FaultsFromEnv() (Faults, error) {
	v := os.Getenv("HDFS_SINK_CRASH_AT")
	if v == "" {
		return nil, nil
	}
	name, nStr, _ := strings.Cut(v, ":")
	s, err := ParseState(name)
	if err != nil {
		return nil, fmt.Errorf("HDFS_SINK_CRASH_AT: %w", err)
	}
	n := 1
	if nStr != "" {
		if n, err = strconv.Atoi(nStr); err != nil || n < 1 {
			return nil, fmt.Errorf("HDFS_SINK_CRASH_AT: count %q must be an integer >= 1", nStr)
		}
	}
	return &CrashAt{State: s, N: n}, nil
}
