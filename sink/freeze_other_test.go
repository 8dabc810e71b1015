//go:build !linux

package sink

// freezeChild: TestFreezeSelfStopsTheCaller, its only caller, is Linux's
// (freeze_test.go).
func freezeChild() {}
