package partitioner

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

func TestHiveEscape(t *testing.T) {
	tests := []struct{ in, want string }{
		{"FR", "FR"},
		{"a/b:c", "a%2Fb%3Ac"},
		{"50%=half?", "50%25%3Dhalf%3F"},
		{"tab\there", "tab%09here"},
		{`q"#'*\{[]^`, "q%22%23%27%2A%5C%7B%5B%5D%5E"},
		{"Zürich café", "Zürich café"},
		{"", "__HIVE_DEFAULT_PARTITION__"},
	}
	for _, tc := range tests {
		got := escapePathName(tc.in)
		if got != tc.want {
			t.Errorf("escape %q = %q, want %q", tc.in, got, tc.want)
		}
		if tc.in != "" && unescapePathName(got) != tc.in {
			t.Errorf("unescape %q = %q, want %q", got, unescapePathName(got), tc.in)
		}
	}
	// As Hive does, a "%" without two hex digits is kept.
	if got := unescapePathName("100%/%4/%zz%2f"); got != "100%/%4/%zz/" {
		t.Errorf("unescape lone %% = %q", got)
	}
}

func TestValuesErrors(t *testing.T) {
	hourly, err := New(Config{Kind: KindHourly, Locale: "en", Location: mustLoad(t, "UTC")})
	if err != nil {
		t.Fatal(err)
	}
	field, err := NewField([]string{"a", "b.c"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		p       Partitioner
		encoded string
		want    string
	}{
		{"too many", Default{}, "partition=7/x=1", `partitioner: path "partition=7/x=1": has 2 components, want 1 (partition)`},
		{"wrong column", Default{}, "part=7", `partitioner: path "part=7": component 1 is column "part", want "partition"`},
		{"no equals", Default{}, "7", `partitioner: path "7": component "7" is not name=value`},
		{"too few", hourly, "year=2026/month=03", `partitioner: path "year=2026/month=03": has 2 components, want 4 (year, month, day, hour)`},
		{"order", field, "b.c=1/a=2", `partitioner: path "b.c=1/a=2": component 1 is column "b.c", want "a"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.p.Values(tc.encoded)
			var pe *PathError
			if !errors.As(err, &pe) || err.Error() != tc.want {
				t.Fatalf("Values(%q) error %v, want *PathError %q", tc.encoded, err, tc.want)
			}
		})
	}
}

func TestDefault(t *testing.T) {
	called := false
	r := Record{Partition: 12, Value: func() (any, error) { called = true; return nil, nil }}
	enc, err := Default{}.Encode(r)
	if err != nil || enc != "partition=12" {
		t.Fatalf("Encode = %q, %v", enc, err)
	}
	if called {
		t.Error("Default decoded the record value")
	}
	vals, err := Default{}.Values(enc)
	if err != nil || !reflect.DeepEqual(vals, []string{"12"}) {
		t.Errorf("Values = %q, %v", vals, err)
	}
	p, err := New(Config{})
	if err != nil || !reflect.DeepEqual(p, Default{}) {
		t.Errorf("New(Config{}) = %#v, %v; want Default{}", p, err)
	}
}

// TestDefaultEncodeEveryPartition: the directories built once for the
// first partitions and the ones built per record past them say the same.
func TestDefaultEncodeEveryPartition(t *testing.T) {
	for _, part := range []int32{0, 1, 9, 10, 1023, 1024, 1025, 9999, 1<<31 - 1} {
		enc, err := Default{}.Encode(Record{Partition: part})
		if want := fmt.Sprintf("partition=%d", part); err != nil || enc != want {
			t.Errorf("partition %d: %q, %v; want %q", part, enc, err, want)
		}
	}
}
