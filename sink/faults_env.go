//go:build faults

package sink

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

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
