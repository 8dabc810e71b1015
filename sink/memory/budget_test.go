package memory

import (
	"testing"
)

func TestMemoryBudgetAllowance(t *testing.T) {
	a, b := new(int), new(int) // two connectors
	tests := []struct {
		name           string
		max, other, me int64
		want           int64
	}{
		{"under the budget keeps all", 100, 30, 60, 60},
		{"exactly at the budget keeps all", 100, 40, 60, 60},
		{"over: proportional share", 100, 100, 100, 50},
		{"over, alone holding most", 100, 0, 400, 100},
		{"holding nothing", 100, 500, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bud := NewBudget(tt.max)
			bud.Report(b, tt.other)
			if got := bud.Allowance(a, tt.me); got != tt.want {
				t.Fatalf("allowance = %d, want %d", got, tt.want)
			}
			bud.Leave(b)
			if got := bud.Buffered(); got != tt.me {
				t.Fatalf("after the other left, buffered = %d, want %d", got, tt.me)
			}
		})
	}
	var nilBudget *Budget
	if got := nilBudget.Allowance(a, 7); got != 7 {
		t.Fatalf("nil budget allowance = %d, want 7", got)
	}
}
