package memory

import (
	"os"
	"runtime/debug"
)

// gcPercent is the garbage collector's proportional trigger (GOGC) under
// a plan: the heap may grow to five times what survived the last
// collection, and the soft limit caps it. A busy connector thus collects
// as it nears its ceiling rather than each time its small live heap
// doubles (Go's default, 100), which cost 13–17 % more CPU per Avro record
// in tools/bench (decisions.md D44); a quiet process stays near five times
// its live data instead of sitting at its ceiling, as it would with the
// trigger off.
const gcPercent = 400

// Govern hands the plan's soft limit to Go's garbage collector and raises
// its proportional trigger to gcPercent. Near the limit the runtime
// collects harder, never spending more than half the CPU on it, exactly as
// it does under Go's default once the limit binds, which is where Parquet
// workloads already run.
//
// An operator's GOMEMLIMIT wins over the plan, and an operator's GOGC over
// gcPercent; a plan with no room for a limit (GoLimit ≤ 0) changes
// nothing. It reports whether the limit was set.
func (p Plan) Govern() bool {
	if p.GoLimit <= 0 || os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetMemoryLimit(p.GoLimit)
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
	}
	return true
}
