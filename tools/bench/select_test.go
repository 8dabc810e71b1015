package main

import (
	"strings"
	"testing"
)

// TestSelectWorkloads: -only reaches every workload of the full matrix in
// the order named, "none" selects none, and a name that is not a workload
// is an error (it used to shorten the run silently: 100B×8p×parquet was
// skipped without -full).
func TestSelectWorkloads(t *testing.T) {
	cases := []struct {
		name    string
		full    bool
		only    string
		want    []string
		wantErr string
	}{
		{name: "default", want: names(defaultMatrix())},
		{name: "full", full: true, want: names(fullMatrix())},
		{name: "outside the default matrix without -full", only: "100Bx8pxparquetxdefault,1KB×1p×avro×default", want: []string{"100B×8p×parquet×default", "1KB×1p×avro×default"}},
		{name: "none", only: "none", want: nil},
		{name: "unknown", only: "1KBx8pxavroxdefault,1KBx9pxavroxdefault", wantErr: `no workload "1KB×9p×avro×default"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := selectWorkloads(tc.full, tc.only)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g := names(got); strings.Join(g, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("selected %v, want %v", g, tc.want)
			}
		})
	}
}

func names(ws []workload) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.String())
	}
	return out
}
