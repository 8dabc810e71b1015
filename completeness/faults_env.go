//go:build faults

package completeness

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// FaultsFromEnv reads HDFS_SINK_CRASH_AT_MARK=STEP[:N] (judged, cataloged
// or marked): the process SIGKILLs itself the N-th time a marking enters
// STEP (the integration tests' crash points; test builds only).
func FaultsFromEnv() (func(Step), error) {
	v := os.Getenv("HDFS_SINK_CRASH_AT_MARK")
	if v == "" {
		return nil, nil
	}
	name, nStr, _ := strings.Cut(v, ":")
	var step Step
	for s := StepJudged; s <= StepMarked; s++ {
		if s.String() == name {
			step = s
		}
	}
	if step == 0 {
		return nil, fmt.Errorf("HDFS_SINK_CRASH_AT_MARK: step %q must be judged, cataloged or marked", name)
	}
	n := 1
	if nStr != "" {
		var err error
		if n, err = strconv.Atoi(nStr); err != nil || n < 1 {
			return nil, fmt.Errorf("HDFS_SINK_CRASH_AT_MARK: count %q must be an integer >= 1", nStr)
		}
	}
	seen := 0
	return func(s Step) {
		if s != step {
			return
		}
		if seen++; seen == n {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
	}, nil
}
