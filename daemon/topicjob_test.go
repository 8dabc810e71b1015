package daemon

import "testing"

// TestTopicStatusesSnapshotIsACopy: the status handler's copy does not
// change when the job updates a topic afterwards, a forgotten topic leaves
// the next copy, and no topics at all is nil (so /status omits the key).
func TestTopicStatusesSnapshotIsACopy(t *testing.T) {
	var st topicStatuses[CompactionStatus]
	if got := st.snapshot(); got != nil {
		t.Fatalf("empty: %v, want nil", got)
	}
	st.update("a", func(s *CompactionStatus) { s.Compacted = 1 })
	st.update("b", func(s *CompactionStatus) { s.Compacted = 5 })
	snap := st.snapshot()
	st.update("a", func(s *CompactionStatus) { s.Compacted++ })
	if snap["a"].Compacted != 1 {
		t.Fatalf("the copy changed with the job: %+v", snap["a"])
	}
	if got := st.snapshot()["a"].Compacted; got != 2 {
		t.Fatalf("update did not accumulate: %d, want 2", got)
	}
	st.forget("b")
	if _, ok := st.snapshot()["b"]; ok {
		t.Fatal("forgotten topic still in the snapshot")
	}
	st.forget("a")
	if got := st.snapshot(); got != nil {
		t.Fatalf("after forgetting every topic: %v, want nil", got)
	}
}
