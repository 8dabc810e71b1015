//go:build faults

package sink

import "testing"

func TestFaultsFromEnv(t *testing.T) {
	for _, tc := range []struct {
		crash, freeze string
		want          *CrashAt
		err           bool
	}{
		{"", "", nil, false},
		{"WAL_APPENDED", "", &CrashAt{State: WALAppended, N: 1}, false},
		{"temp_file_closed:3", "", &CrashAt{State: TempFileClosed, N: 3}, false},
		{"", "WAL_APPLIED:2", &CrashAt{State: WALApplied, N: 2, Freeze: true}, false},
		{"WAL_APPENDED:0", "", nil, true},
		{"WAL_APPENDED:x", "", nil, true},
		{"BOGUS", "", nil, true},
		{"", "BOGUS", nil, true},
		{"WAL_APPENDED", "WAL_APPLIED", nil, true},
	} {
		t.Setenv("HDFS_SINK_CRASH_AT", tc.crash)
		t.Setenv("HDFS_SINK_FREEZE_AT", tc.freeze)
		got, err := FaultsFromEnv()
		if (err != nil) != tc.err {
			t.Fatalf("%q/%q: err = %v", tc.crash, tc.freeze, err)
		}
		if tc.want == nil {
			if !tc.err && got != nil {
				t.Fatalf("%q/%q: got %v, want none", tc.crash, tc.freeze, got)
			}
			continue
		}
		c, ok := got.(*CrashAt)
		if !ok || c.State != tc.want.State || c.N != tc.want.N || c.Freeze != tc.want.Freeze {
			t.Fatalf("%q/%q: got %+v", tc.crash, tc.freeze, got)
		}
	}
}
