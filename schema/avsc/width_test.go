package avsc

import "testing"

func TestMinWidth(t *testing.T) {
	for _, tc := range []struct {
		schema string
		want   int
	}{
		{`{"type":"record","name":"N","fields":[{"name":"a","type":"null"}]}`, 0},
		{`{"type":"record","name":"F","fields":[{"name":"a","type":{"type":"fixed","name":"f4","size":4}},{"name":"b","type":"int"}]}`, 5},
		{`{"type":"record","name":"E","fields":[{"name":"a","type":{"type":"record","name":"In","fields":[{"name":"n","type":"null"}]}}]}`, 0},
		{`{"type":"record","name":"U","fields":[{"name":"a","type":["null","long"]},{"name":"b","type":{"type":"array","items":"null"}}]}`, 2},
		// A recursive record through a union is a valid schema: the union takes one byte.
		{`{"type":"record","name":"L","fields":[{"name":"next","type":["null","L"]}]}`, 1},
	} {
		root, _, err := Read(tc.schema)
		if err != nil {
			t.Fatalf("%s: %v", tc.schema, err)
		}
		if got := root.MinWidth(); got != tc.want {
			t.Errorf("%s: MinWidth = %d, want %d", tc.schema, got, tc.want)
		}
	}
	root, _, _ := Read(`{"type":"record","name":"A","fields":[{"name":"xs","type":{"type":"array","items":"null"}}]}`)
	if w := root.Fields[0].Type.Items.MinWidth(); w != 0 {
		t.Fatalf("array items of null: MinWidth = %d, want 0 (set below the root too)", w)
	}
}
