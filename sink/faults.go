package sink

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Faults is told of every state a partition enters. It exists so the crash
// and freeze tests can stop the daemon at every step of both machines.
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
		syscall.Kill(os.Getpid(), syscall.SIGSTOP) // returns once continued
		return
	}
	fmt.Fprintf(os.Stderr, "hdfs-sink: fault injection: SIGKILL at %s (#%d)\n", s, c.N)
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // never returns: the signal is on its way
}

// FaultsFromEnv reads HDFS_SINK_CRASH_AT=STATE[:N] (SIGKILL) or
// HDFS_SINK_FREEZE_AT=STATE[:N] (SIGSTOP); N defaults to 1.
func FaultsFromEnv() (Faults, error) {
	crash, freeze := os.Getenv("HDFS_SINK_CRASH_AT"), os.Getenv("HDFS_SINK_FREEZE_AT")
	switch {
	case crash != "" && freeze != "":
		return nil, fmt.Errorf("HDFS_SINK_CRASH_AT and HDFS_SINK_FREEZE_AT are both set; set one")
	case crash != "":
		return parseFault("HDFS_SINK_CRASH_AT", crash, false)
	case freeze != "":
		return parseFault("HDFS_SINK_FREEZE_AT", freeze, true)
	}
	return nil, nil
}

func parseFault(key, v string, freeze bool) (Faults, error) {
	name, nStr, _ := strings.Cut(v, ":")
	s, err := ParseState(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	n := 1
	if nStr != "" {
		if n, err = strconv.Atoi(nStr); err != nil || n < 1 {
			return nil, fmt.Errorf("%s: count %q must be an integer >= 1", key, nStr)
		}
	}
	return &CrashAt{State: s, N: n, Freeze: freeze}, nil
}
