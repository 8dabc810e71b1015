package partitioner

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

const minutesFormat = "'year'=YYYY/'month'=MM/'day'=dd/'hour'=HH/'minute'=mm"

func utc(y int, mo time.Month, d, h, mi, s, ms int) time.Time {
	return time.Date(y, mo, d, h, mi, s, ms*1e6, time.UTC)
}

// TestTimeBasedBuckets checks bucket starts against strings derived by hand.
//
// How the expected strings were derived: the 2026 transitions come from the
// tz rules (EU: last Sunday of March and October at 01:00 UTC; US: second
// Sunday of March at 02:00 EST = 07:00 UTC, first Sunday of November at
// 02:00 EDT = 06:00 UTC). Europe/Berlin is UTC+1 (CET) before 2026-03-29
// 01:00Z and after 2026-10-25 01:00Z, UTC+2 (CEST) between. New York is
// UTC-5 (EST) before 2026-03-08 07:00Z and after 2026-11-01 06:00Z, UTC-4
// (EDT) between. For each instant: local = UTC + offset; the bucket is
// local rounded down to the duration (hours, half hours, days on the
// wall clock); the path prints that wall clock. When the rounded wall
// clock falls in a spring-forward gap (2-hour buckets starting at the
// missing 02:00) Joda's convertLocalToUTC moves it to 03:00 in both zones.
func TestTimeBasedBuckets(t *testing.T) {
	const h, m30, d = time.Hour, 30 * time.Minute, 24 * time.Hour
	const hourly, daily = HourlyPathFormat, DailyPathFormat
	tests := []struct {
		zone   string
		dur    time.Duration
		format string
		at     time.Time
		want   string
	}{
		// Berlin, spring forward: 02:00 CET becomes 03:00 CEST.
		{"Europe/Berlin", h, hourly, utc(2026, 3, 29, 0, 59, 59, 999), "year=2026/month=03/day=29/hour=01"},
		{"Europe/Berlin", h, hourly, utc(2026, 3, 29, 1, 0, 0, 0), "year=2026/month=03/day=29/hour=03"},
		{"Europe/Berlin", h, hourly, utc(2026, 3, 29, 1, 59, 59, 999), "year=2026/month=03/day=29/hour=03"},
		{"Europe/Berlin", m30, minutesFormat, utc(2026, 3, 29, 0, 45, 0, 0), "year=2026/month=03/day=29/hour=01/minute=30"},
		{"Europe/Berlin", m30, minutesFormat, utc(2026, 3, 29, 1, 15, 0, 0), "year=2026/month=03/day=29/hour=03/minute=00"},
		{"Europe/Berlin", 2 * h, hourly, utc(2026, 3, 29, 1, 30, 0, 0), "year=2026/month=03/day=29/hour=03"},
		// Berlin, fall back: 03:00 CEST becomes 02:00 CET; both 02:xx share a directory.
		{"Europe/Berlin", h, hourly, utc(2026, 10, 25, 0, 30, 0, 0), "year=2026/month=10/day=25/hour=02"},
		{"Europe/Berlin", h, hourly, utc(2026, 10, 25, 1, 30, 0, 0), "year=2026/month=10/day=25/hour=02"},
		{"Europe/Berlin", h, hourly, utc(2026, 10, 25, 2, 0, 0, 0), "year=2026/month=10/day=25/hour=03"},
		{"Europe/Berlin", m30, minutesFormat, utc(2026, 10, 25, 0, 45, 0, 0), "year=2026/month=10/day=25/hour=02/minute=30"},
		{"Europe/Berlin", m30, minutesFormat, utc(2026, 10, 25, 1, 10, 0, 0), "year=2026/month=10/day=25/hour=02/minute=00"},
		// Berlin day, year and leap-day boundaries.
		{"Europe/Berlin", d, daily, utc(2026, 6, 30, 21, 59, 59, 999), "year=2026/month=06/day=30"},
		{"Europe/Berlin", d, daily, utc(2026, 6, 30, 22, 0, 0, 0), "year=2026/month=07/day=01"},
		{"Europe/Berlin", d, daily, utc(2026, 12, 31, 23, 0, 0, 0), "year=2027/month=01/day=01"},
		{"Europe/Berlin", d, daily, utc(2024, 2, 28, 23, 30, 0, 0), "year=2024/month=02/day=29"},
		{"Europe/Berlin", d, daily, utc(2024, 2, 29, 23, 30, 0, 0), "year=2024/month=03/day=01"},
		// New York, spring forward: 02:00 EST becomes 03:00 EDT.
		{"America/New_York", h, hourly, utc(2026, 3, 8, 6, 59, 59, 999), "year=2026/month=03/day=08/hour=01"},
		{"America/New_York", h, hourly, utc(2026, 3, 8, 7, 0, 0, 0), "year=2026/month=03/day=08/hour=03"},
		{"America/New_York", m30, minutesFormat, utc(2026, 3, 8, 6, 40, 0, 0), "year=2026/month=03/day=08/hour=01/minute=30"},
		{"America/New_York", m30, minutesFormat, utc(2026, 3, 8, 7, 20, 0, 0), "year=2026/month=03/day=08/hour=03/minute=00"},
		{"America/New_York", 2 * h, hourly, utc(2026, 3, 8, 6, 30, 0, 0), "year=2026/month=03/day=08/hour=00"},
		// The bucket starts at the missing 02:00: Joda says 03:00 EDT (Go's time.Date would say 01:00 EST).
		{"America/New_York", 2 * h, hourly, utc(2026, 3, 8, 7, 30, 0, 0), "year=2026/month=03/day=08/hour=03"},
		// New York, fall back: 02:00 EDT becomes 01:00 EST.
		{"America/New_York", h, hourly, utc(2026, 11, 1, 5, 30, 0, 0), "year=2026/month=11/day=01/hour=01"},
		{"America/New_York", h, hourly, utc(2026, 11, 1, 6, 30, 0, 0), "year=2026/month=11/day=01/hour=01"},
		{"America/New_York", h, hourly, utc(2026, 11, 1, 7, 0, 0, 0), "year=2026/month=11/day=01/hour=02"},
		{"America/New_York", m30, minutesFormat, utc(2026, 11, 1, 5, 40, 0, 0), "year=2026/month=11/day=01/hour=01/minute=30"},
		{"America/New_York", m30, minutesFormat, utc(2026, 11, 1, 6, 10, 0, 0), "year=2026/month=11/day=01/hour=01/minute=00"},
		// New York days of 23 and 25 hours, a year boundary and a leap day.
		{"America/New_York", d, daily, utc(2026, 3, 8, 4, 59, 59, 999), "year=2026/month=03/day=07"},
		{"America/New_York", d, daily, utc(2026, 3, 8, 5, 0, 0, 0), "year=2026/month=03/day=08"},
		{"America/New_York", d, daily, utc(2026, 3, 9, 3, 59, 59, 999), "year=2026/month=03/day=08"},
		{"America/New_York", d, daily, utc(2026, 3, 9, 4, 0, 0, 0), "year=2026/month=03/day=09"},
		{"America/New_York", d, daily, utc(2026, 11, 2, 4, 59, 59, 999), "year=2026/month=11/day=01"},
		{"America/New_York", d, daily, utc(2026, 11, 2, 5, 0, 0, 0), "year=2026/month=11/day=02"},
		{"America/New_York", d, daily, utc(2026, 1, 1, 4, 59, 0, 0), "year=2025/month=12/day=31"},
		{"America/New_York", d, daily, utc(2024, 3, 1, 3, 0, 0, 0), "year=2024/month=02/day=29"},
		// Before 1970 (negative epoch millis). Java's truncating division in
		// the reference would put -1 ms into 1970-01-01.
		{"UTC", d, daily, utc(1969, 12, 31, 23, 59, 59, 999), "year=1969/month=12/day=31"},
		{"UTC", h, hourly, utc(1969, 12, 31, 23, 59, 59, 999), "year=1969/month=12/day=31/hour=23"},
		{"UTC", m30, minutesFormat, utc(1969, 12, 31, 23, 59, 59, 999), "year=1969/month=12/day=31/hour=23/minute=30"},
		{"UTC", d, daily, utc(1968, 2, 29, 12, 0, 0, 0), "year=1968/month=02/day=29"},
		{"America/New_York", h, hourly, utc(1969, 7, 20, 20, 17, 40, 0), "year=1969/month=07/day=20/hour=16"}, // EDT in 1969
		{"Europe/Berlin", d, daily, utc(1959, 12, 31, 23, 30, 0, 0), "year=1960/month=01/day=01"},             // CET, no DST then
	}
	for _, tc := range tests {
		p, err := NewTimeBased(Config{Duration: tc.dur, PathFormat: tc.format, Locale: "en",
			Location: mustLoad(t, tc.zone), Now: func() time.Time { return tc.at }})
		if err != nil {
			t.Fatal(err)
		}
		// The wall clock extractor, because Record rejects times before 1970.
		got, err := p.Encode(Record{Timestamp: -1})
		if err != nil || got != tc.want {
			t.Errorf("%s %v %s: Encode = %q, %v; want %q", tc.zone, tc.dur, tc.at.Format(time.RFC3339Nano), got, err, tc.want)
		}
	}
}

// TestTimeBasedAgreesWithWallClock cross-checks the bucket arithmetic with
// Go's own instant-to-wall-clock conversion, minute by minute through both
// DST days of 2026 in both zones: for hour, half-hour and day buckets the
// path is the local wall clock rounded down.
func TestTimeBasedAgreesWithWallClock(t *testing.T) {
	days := map[string][]time.Time{
		"Europe/Berlin":    {utc(2026, 3, 28, 12, 0, 0, 0), utc(2026, 10, 24, 12, 0, 0, 0)},
		"America/New_York": {utc(2026, 3, 7, 12, 0, 0, 0), utc(2026, 10, 31, 12, 0, 0, 0)},
	}
	for zone, starts := range days {
		loc := mustLoad(t, zone)
		hourly := newTB(t, Config{Kind: KindHourly, Location: loc})
		halves := newTB(t, Config{Kind: KindTimeBased, Duration: 30 * time.Minute, PathFormat: minutesFormat, Location: loc})
		daily := newTB(t, Config{Kind: KindDaily, Location: loc})
		for _, start := range starts {
			for at := start; at.Before(start.Add(48 * time.Hour)); at = at.Add(time.Minute) {
				local := at.In(loc)
				half := "00"
				if local.Minute() >= 30 {
					half = "30"
				}
				r := Record{Timestamp: at.UnixMilli()}
				check(t, hourly, r, local.Format("year=2006/month=01/day=02/hour=15"))
				check(t, halves, r, local.Format("year=2006/month=01/day=02/hour=15/minute=")+half)
				check(t, daily, r, local.Format("year=2006/month=01/day=02"))
			}
		}
	}
}

func newTB(t *testing.T, cfg Config) Partitioner {
	t.Helper()
	cfg.Locale, cfg.Extractor = "en", RecordTime
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func check(t *testing.T, p Partitioner, r Record, want string) {
	t.Helper()
	if got, err := p.Encode(r); err != nil || got != want {
		t.Fatalf("Encode(%s) = %q, %v; want %q", time.UnixMilli(r.Timestamp).UTC(), got, err, want)
	}
}

func TestTimeBasedFieldsAndValues(t *testing.T) {
	tests := []struct {
		cfg     Config
		fields  []string
		at      time.Time
		encoded string
		values  []string
	}{
		{Config{Kind: KindHourly}, []string{"year", "month", "day", "hour"}, utc(2026, 3, 29, 1, 0, 0, 0),
			"year=2026/month=03/day=29/hour=01", []string{"2026", "03", "29", "01"}},
		{Config{Kind: KindDaily}, []string{"year", "month", "day"}, utc(2026, 3, 29, 1, 0, 0, 0),
			"year=2026/month=03/day=29", []string{"2026", "03", "29"}},
		// A trailing "/" is dropped, as in the reference.
		{Config{Kind: KindTimeBased, Duration: time.Hour, PathFormat: "'dt'=YYYY-MM-dd/'hr'=HH/"}, []string{"dt", "hr"},
			utc(2026, 3, 29, 1, 0, 0, 0), "dt=2026-03-29/hr=01", []string{"2026-03-29", "01"}},
	}
	for _, tc := range tests {
		tc.cfg.Locale, tc.cfg.Location, tc.cfg.Extractor = "en", time.UTC, RecordTime
		p, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(p.Fields(), tc.fields) {
			t.Errorf("%s: Fields = %q, want %q", tc.cfg.Kind, p.Fields(), tc.fields)
		}
		enc, err := p.Encode(Record{Timestamp: tc.at.UnixMilli()})
		if err != nil || enc != tc.encoded {
			t.Errorf("%s: Encode = %q, %v; want %q", tc.cfg.Kind, enc, err, tc.encoded)
		}
		if vals, err := p.Values(enc); err != nil || !reflect.DeepEqual(vals, tc.values) {
			t.Errorf("%s: Values(%q) = %q, %v; want %q", tc.cfg.Kind, enc, vals, err, tc.values)
		}
	}
	// A part without "=" is named like the reference names it, and cannot
	// be split back into Hive values.
	p := newTB(t, Config{Kind: KindTimeBased, Duration: time.Hour, PathFormat: "YYYY/'m'=MM", Location: time.UTC})
	if f := p.Fields(); !reflect.DeepEqual(f, []string{"YYYY", "m"}) {
		t.Errorf("Fields = %q", f)
	}
	if _, err := p.Values("2026/m=03"); err == nil {
		t.Error("Values accepted a part without name=value")
	}
}

func TestExtractors(t *testing.T) {
	berlin := mustLoad(t, "Europe/Berlin")
	now := func() time.Time { return utc(2026, 3, 29, 1, 0, 0, 0) }
	noDecode := func() (any, error) { t.Error("value decoded"); return nil, nil }
	tests := []struct {
		name string
		cfg  Config
		r    Record
		want string
	}{
		{"wallclock", Config{Now: now}, Record{Timestamp: 0, Value: noDecode}, "year=2026/month=03/day=29/hour=03"},
		{"record", Config{Extractor: RecordTime}, Record{Timestamp: 1774745999999, Value: noDecode}, "year=2026/month=03/day=29/hour=01"},
		{"record epoch", Config{Extractor: RecordTime}, Record{Timestamp: 0}, "year=1970/month=01/day=01/hour=01"},
	}
	for _, tc := range tests {
		tc.cfg.Kind, tc.cfg.Locale, tc.cfg.Location = KindHourly, "en", berlin
		p, err := New(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p.Encode(tc.r); err != nil || got != tc.want {
			t.Errorf("%s: Encode = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// TestRecordField reads timestamps from the fields of an Avro record, with
// hourly buckets in Berlin (CET = UTC+1 in winter and in 1969; CEST = UTC+2
// from 2026-03-29T01:00Z to 2026-10-25T01:00Z).
func TestRecordField(t *testing.T) {
	tests := []struct {
		field  string
		change func(map[string]any)
		want   string
	}{
		{"ts", nil, "year=2026/month=03/day=29/hour=03"},    // 01:00Z = 03:00 CEST
		{"ts_us", nil, "year=2026/month=03/day=29/hour=03"}, // same instant in micros
		{"day", nil, "year=2026/month=03/day=29/hour=01"},   // a date is its UTC midnight: 01:00 CET
		{"opt_ts", set("opt_ts", map[string]any{"long.timestamp-millis": utc(2026, 10, 25, 0, 30, 0, 0)}),
			"year=2026/month=10/day=25/hour=02"},
		{"id", set("id", int64(1774745999999)), "year=2026/month=03/day=29/hour=01"},
		{"qty", set("qty", int32(3600000)), "year=1970/month=01/day=01/hour=02"},
		{"customer.tier", nil, "year=1970/month=01/day=01/hour=01"}, // nested int: 3 ms
		{"ts_str", set("ts_str", "1774746000000"), "year=2026/month=03/day=29/hour=03"},
		{"ts_str", set("ts_str", "-1"), "year=1970/month=01/day=01/hour=00"},
		{"ts_str", set("ts_str", "2026-03-29T03:00:00+02:00"), "year=2026/month=03/day=29/hour=03"},
		{"ts_str", set("ts_str", "2026-03-29T03:00:00+0200"), "year=2026/month=03/day=29/hour=03"},
		{"ts_str", set("ts_str", "2026-03-29T03+02"), "year=2026/month=03/day=29/hour=03"},
		{"ts_str", set("ts_str", "2026-03-29t01:00:00.5z"), "year=2026/month=03/day=29/hour=03"},
		{"ts_str", set("ts_str", "2026-03-29T00:59:59.999999Z"), "year=2026/month=03/day=29/hour=01"},
		{"ts_str", set("ts_str", "2026-03-29 03:30"), "year=2026/month=03/day=29/hour=03"}, // no zone: Berlin
		{"ts_str", set("ts_str", "2026-03-29T01:30"), "year=2026/month=03/day=29/hour=01"},
		{"ts_str", set("ts_str", "2026-03-29T02:30"), "year=2026/month=03/day=29/hour=03"}, // in the gap: moved forward
		{"ts_str", set("ts_str", "2026-10-25T02:30"), "year=2026/month=10/day=25/hour=02"}, // in the overlap
		{"ts_str", set("ts_str", "2026-03-29"), "year=2026/month=03/day=29/hour=00"},       // local midnight
		{"ts_str", set("ts_str", "2024-02-29T12:00:00Z"), "year=2024/month=02/day=29/hour=13"},
		{"ts_str", set("ts_str", "1969-07-20T20:17:40Z"), "year=1969/month=07/day=20/hour=21"},
	}
	berlin := mustLoad(t, "Europe/Berlin")
	for _, tc := range tests {
		p, err := New(Config{Kind: KindHourly, Locale: "en", Location: berlin, Extractor: RecordField, TimestampField: tc.field})
		if err != nil {
			t.Fatal(err)
		}
		if got, err := p.Encode(order(t, tc.change)); err != nil || got != tc.want {
			t.Errorf("%s: Encode = %q, %v; want %q", tc.field, got, err, tc.want)
		}
	}
}

func TestTimestampErrors(t *testing.T) {
	const neither = ` is neither epoch milliseconds nor an ISO-8601 date-time`
	const must = "; a timestamp field must be a timestamp, date, int, long or string"
	tests := []struct {
		name  string
		cfg   Config
		r     func(t *testing.T) Record
		want  string
		cause error
	}{
		{"no record timestamp", Config{Extractor: RecordTime}, func(*testing.T) Record { return Record{Timestamp: -1} },
			`partitioner: record timestamp: -1 is missing or negative`, nil},
		{"words", field("ts_str"), rec(set("ts_str", "yesterday")), `partitioner: timestamp field "ts_str": "yesterday"` + neither, nil},
		{"empty", field("ts_str"), rec(set("ts_str", "")), `partitioner: timestamp field "ts_str": ""` + neither, nil},
		{"no leap day", field("ts_str"), rec(set("ts_str", "2023-02-29")), `partitioner: timestamp field "ts_str": "2023-02-29"` + neither, nil},
		{"bad hour", field("ts_str"), rec(set("ts_str", "2026-03-29T25:00Z")), `partitioner: timestamp field "ts_str": "2026-03-29T25:00Z"` + neither, nil},
		{"overflow", field("ts_str"), rec(set("ts_str", "99999999999999999999")),
			`partitioner: timestamp field "ts_str": "99999999999999999999"` + neither + `: strconv.ParseInt: parsing "99999999999999999999": value out of range`, nil},
		{"double", field("price"), rec(nil), `partitioner: timestamp field "price": value is a double` + must, nil},
		{"null", field("opt_ts"), rec(nil), `partitioner: timestamp field "opt_ts": value is null` + must, nil},
		{"missing", field("nope"), rec(nil), `partitioner: timestamp field "nope": the record value has no field "nope"`, nil},
		{"default field", field(""), rec(nil), `partitioner: timestamp field "timestamp": the record value has no field "timestamp"`, nil},
		{"missing nested", field("customer.when"), rec(nil), `partitioner: timestamp field "customer.when": "customer" has no field "when"`, nil},
		{"out of range", field("id"), rec(set("id", int64(1)<<60)), `partitioner: timestamp: 1152921504606846976 ms since 1970 is out of range`, nil},
		{"decode fails", field("ts"), func(*testing.T) Record { return failingValue(errBoom) },
			`partitioner: timestamp field "ts": decode value: boom`, errBoom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Kind, tc.cfg.Locale, tc.cfg.Location = KindHourly, "en", time.UTC
			p, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Encode(tc.r(t))
			var re *RecordError
			if !errors.As(err, &re) || err.Error() != tc.want {
				t.Fatalf("error %v, want *RecordError %q", err, tc.want)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("error %v does not wrap %v", err, tc.cause)
			}
		})
	}
}

func field(name string) Config { return Config{Extractor: RecordField, TimestampField: name} }
