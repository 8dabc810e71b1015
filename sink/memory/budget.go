package memory

import (
	"sync"
)

// Budget bounds the bytes buffered by the open files of all the
// connectors that share it: one per process, so that many connectors with
// many partitions each cannot together outgrow the machine. Each connector
// (a holder: any comparable value that names it, such as its pointer)
// reports what it holds after every batch; when the sum is over max, each
// keeps only its proportional share and rotates its largest files early.
type Budget struct {
	max  int64
	mu   sync.Mutex
	held map[any]int64
}

// NewBudget returns a budget of max bytes (max > 0).
func NewBudget(max int64) *Budget {
	return &Budget{max: max, held: map[any]int64{}}
}

// Allowance records that c holds held bytes and returns how many it may
// keep: all of them while the process is under the budget, else its share
// of the budget in proportion to what it holds. A nil budget allows all.
func (b *Budget) Allowance(c any, held int64) int64 {
	if b == nil {
		return held
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.held[c] = held
	var total int64
	for _, h := range b.held {
		total += h
	}
	if total <= b.max {
		return held
	}
	return int64(float64(held) * float64(b.max) / float64(total))
}

// Report records what c holds after it enforced its allowance.
func (b *Budget) Report(c any, held int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.held[c] = held
	b.mu.Unlock()
}

// Leave forgets c: a stopped connector holds nothing.
func (b *Budget) Leave(c any) {
	if b == nil {
		return
	}
	b.mu.Lock()
	delete(b.held, c)
	b.mu.Unlock()
}

// Buffered is what the connectors sharing b held at their last report.
func (b *Budget) Buffered() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var total int64
	for _, h := range b.held {
		total += h
	}
	return total
}
