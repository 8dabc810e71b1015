package partitioner

import (
	"testing"
	"time"
)

func mustLoad(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	return loc
}

// TestJodaFormat is the translation table: each Joda pattern and what Joda
// prints for it. The instant is 2026-03-08T07:05:09.123Z, which New York
// (EDT since 07:00Z that day) shows as Sunday 03:05:09.123 -04:00; 8 March
// is day 67 of 2026 (31 + 28 + 8) and in ISO week 10 (week 1 starts
// Monday 2025-12-29; week 10 starts 2026-03-02).
func TestJodaFormat(t *testing.T) {
	ny := mustLoad(t, "America/New_York")
	at := time.Date(2026, 3, 8, 7, 5, 9, 123e6, time.UTC).In(ny)
	midnight := time.Date(2026, 3, 9, 0, 30, 0, 0, ny)
	noon := time.Date(2026, 3, 9, 12, 30, 0, 0, ny)
	tests := []struct {
		pattern string
		at      time.Time
		want    string
	}{
		{"YYYY", at, "2026"}, {"yyyy", at, "2026"}, {"y", at, "2026"}, {"yyyyy", at, "02026"},
		{"YY", at, "26"}, {"yy", at, "26"}, {"xxxx", at, "2026"}, {"CC", at, "20"}, {"G", at, "AD"},
		{"MM", at, "03"}, {"M", at, "3"}, {"MMM", at, "Mar"}, {"MMMM", at, "March"},
		{"dd", at, "08"}, {"d", at, "8"}, {"D", at, "67"}, {"DDD", at, "067"},
		{"ww", at, "10"}, {"e", at, "7"}, {"E", at, "Sun"}, {"EEEE", at, "Sunday"},
		{"HH", at, "03"}, {"H", at, "3"}, {"hh", at, "03"}, {"kk", at, "03"}, {"KK", at, "03"}, {"a", at, "AM"},
		{"mm", at, "05"}, {"m", at, "5"}, {"ss", at, "09"}, {"SSS", at, "123"}, {"S", at, "1"},
		{"Z", at, "-0400"}, {"ZZ", at, "-04:00"}, {"ZZZ", at, "America/New_York"}, {"z", at, "EDT"},
		{"Z", at.UTC(), "Z"},
		{"HH kk hh KK a", midnight, "00 24 12 00 AM"},
		{"HH kk hh KK a", noon, "12 12 12 00 PM"},
		{"'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH", at, "year=2026/month=03/day=08/hour=03"},
		{"YYYY-MM-dd'T'HH", at, "2026-03-08T03"},
		{"'it''s' HH", at, "it's 03"},
		{"''HH''", at, "'03'"},
		{"'a/b'=HH", at, "a/b=03"},
		{"'Monday 2006'", at, "Monday 2006"},
		{"dd.MM.yyyy", at, "08.03.2026"},
		{"'unterminated HH", at, "unterminated HH"},
		{"YYYY", time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), "1969"},
		{"yyyy", time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), "-0005"},
		{"YYYY G", time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), "0006 BC"},
	}
	for _, tc := range tests {
		l, err := compileJoda(tc.pattern)
		if err != nil {
			t.Errorf("compile %q: %v", tc.pattern, err)
			continue
		}
		if got := l.format(tc.at); got != tc.want {
			t.Errorf("%q at %s = %q, want %q", tc.pattern, tc.at, got, tc.want)
		}
	}
}

func TestJodaIllegal(t *testing.T) {
	tests := []struct{ pattern, want string }{
		{"YYYY/'q'=qq", `illegal pattern component "qq"`},
		{"YYYY-MM-ddTHH", `illegal pattern component "T"`},
		{"bb", `illegal pattern component "bb"`},
		{"year=YYYY", `illegal pattern component "r"`},
	}
	for _, tc := range tests {
		_, err := compileJoda(tc.pattern)
		if err == nil || err.Error() != tc.want {
			t.Errorf("compile %q: error %v, want %q", tc.pattern, err, tc.want)
		}
	}
}
