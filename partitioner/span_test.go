package partitioner

import (
	"testing"
	"time"
)

// TestSpanExamples pins where a directory's time ends where zones make it
// odd: the fall-back hour that holds two hours of records, and the hours
// around a spring-forward gap.
func TestSpanExamples(t *testing.T) {
	tests := []struct {
		zone string
		dur  time.Duration
		fmt  string
		at   time.Time
		dir  string
		end  time.Time
	}{
		{"UTC", time.Hour, HourlyPathFormat, utc(2026, 5, 1, 14, 20, 0, 0), "year=2026/month=05/day=01/hour=14", utc(2026, 5, 1, 15, 0, 0, 0)},
		// Berlin fall back: both 02:xx share a directory, which ends at 02:00Z whichever 02:xx the record had.
		{"Europe/Berlin", time.Hour, HourlyPathFormat, utc(2026, 10, 25, 0, 30, 0, 0), "year=2026/month=10/day=25/hour=02", utc(2026, 10, 25, 2, 0, 0, 0)},
		{"Europe/Berlin", time.Hour, HourlyPathFormat, utc(2026, 10, 25, 1, 30, 0, 0), "year=2026/month=10/day=25/hour=02", utc(2026, 10, 25, 2, 0, 0, 0)},
		// ... and with half hours, 02:00-02:30 comes twice: it ends with its second stretch.
		{"Europe/Berlin", 30 * time.Minute, minutesFormat, utc(2026, 10, 25, 0, 10, 0, 0), "year=2026/month=10/day=25/hour=02/minute=00", utc(2026, 10, 25, 1, 30, 0, 0)},
		// Berlin spring forward: hour=01 ends where hour=03 starts.
		{"Europe/Berlin", time.Hour, HourlyPathFormat, utc(2026, 3, 29, 0, 30, 0, 0), "year=2026/month=03/day=29/hour=01", utc(2026, 3, 29, 1, 0, 0, 0)},
		{"Europe/Berlin", time.Hour, HourlyPathFormat, utc(2026, 3, 29, 1, 30, 0, 0), "year=2026/month=03/day=29/hour=03", utc(2026, 3, 29, 2, 0, 0, 0)},
		{"UTC", 24 * time.Hour, DailyPathFormat, utc(2026, 5, 1, 14, 20, 0, 0), "year=2026/month=05/day=01", utc(2026, 5, 2, 0, 0, 0, 0)},
	}
	for _, tc := range tests {
		p, err := NewTimeBased(Config{Duration: tc.dur, PathFormat: tc.fmt, Locale: "en", Location: mustLoad(t, tc.zone), Extractor: RecordTime})
		if err != nil {
			t.Fatal(err)
		}
		dir, end := p.Span(tc.at.UnixMilli())
		if dir != tc.dir || end != tc.end.UnixMilli() {
			t.Errorf("%s %v: Span = %q ending %v; want %q ending %v", tc.zone, tc.at, dir, time.UnixMilli(end).UTC(), tc.dir, tc.end)
		}
	}
}

// TestSpanAgreesWithEncode walks minute by minute through both DST days of
// 2026 in two zones for hour, half-hour and day buckets: Span names the
// directory Encode gives, and its end is the first minute after the last
// instant filed there (so completeness waits for every record of the
// directory and no longer).
func TestSpanAgreesWithEncode(t *testing.T) {
	days := []time.Time{utc(2026, 3, 7, 0, 0, 0, 0), utc(2026, 3, 28, 0, 0, 0, 0), utc(2026, 10, 24, 0, 0, 0, 0), utc(2026, 10, 31, 0, 0, 0, 0)}
	const minute = 60 * 1000
	for _, zone := range []string{"Europe/Berlin", "America/New_York"} {
		for _, c := range []struct {
			dur    time.Duration
			format string
		}{{time.Hour, HourlyPathFormat}, {30 * time.Minute, minutesFormat}, {24 * time.Hour, DailyPathFormat}} {
			p, err := NewTimeBased(Config{Duration: c.dur, PathFormat: c.format, Locale: "en", Location: mustLoad(t, zone), Extractor: RecordTime})
			if err != nil {
				t.Fatal(err)
			}
			for _, day := range days {
				last, ends := map[string]int64{}, map[string]int64{}
				for at := day.UnixMilli(); at < day.Add(72*time.Hour).UnixMilli(); at += minute {
					dir, end := p.Span(at)
					if enc, _ := p.Encode(Record{Timestamp: at}); dir != enc {
						t.Fatalf("%s %v at %d: Span dir %q, Encode %q", zone, c.dur, at, dir, enc)
					}
					if e, ok := ends[dir]; ok && e != end {
						t.Fatalf("%s %v: %q ends at %d and at %d", zone, c.dur, dir, e, end)
					}
					last[dir], ends[dir] = at, end
				}
				for dir, end := range ends {
					if end != last[dir]+minute && end <= day.Add(71*time.Hour).UnixMilli() {
						t.Errorf("%s %v: %q ends at %v, its last instant is %v", zone, c.dur, dir, time.UnixMilli(end).UTC(), time.UnixMilli(last[dir]).UTC())
					}
				}
			}
		}
	}
}
