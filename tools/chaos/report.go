package chaos

import (
	"fmt"
	"strings"
)

// Table is the results as a Markdown table (docs/reliability.md).
func Table(res []Result) string {
	var b strings.Builder
	b.WriteString("| fault | outcome | records | outage s | recovered after s | goroutines, fds before → after | what the daemon said meanwhile |\n")
	b.WriteString("|---|---|---|---|---|---|---|\n")
	for _, r := range res {
		outcome := r.Outcome
		if i := strings.IndexByte(outcome, '\n'); i >= 0 {
			outcome = outcome[:i]
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %.0f | %.1f | %d, %d → %d, %d | %s |\n", r.Fault, cell(outcome, 160), r.Records,
			r.OutageSeconds, r.RecoverySeconds, r.Before.Goroutines, r.Before.FDs, r.After.Goroutines, r.After.FDs, cell(r.Reported, 200))
	}
	return b.String()
}

func cell(s string, n int) string {
	return strings.ReplaceAll(truncate(s, n), "|", `\|`)
}

// AllPassed reports whether every fault that was run passed (faults not
// run do not fail the run, and do not count as passed either).
func AllPassed(res []Result) bool {
	for _, r := range res {
		if !r.Passed() && !strings.HasPrefix(r.Outcome, "not run") {
			return false
		}
	}
	return true
}
