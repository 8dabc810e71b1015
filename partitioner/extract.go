package partitioner

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// extractor returns the function that reads a record's time in epoch
// milliseconds, per cfg.Extractor.
func extractor(cfg Config) (func(Record) (int64, error), error) {
	switch cfg.Extractor {
	case "", Wallclock:
		now := cfg.Now
		if now == nil {
			now = time.Now
		}
		return func(Record) (int64, error) { return now().UnixMilli(), nil }, nil
	case RecordTime:
		return recordTimestamp, nil
	case RecordField:
		return fieldTimestamp(cfg.TimestampField, cfg.Location)
	}
	return nil, &ConfigError{Key: "timestamp.extractor", Value: string(cfg.Extractor),
		Reason: "must be Wallclock, Record or RecordField"}
}

func recordTimestamp(r Record) (int64, error) {
	if r.Timestamp < 0 {
		return 0, &RecordError{What: "record timestamp", Reason: fmt.Sprintf("%d is missing or negative", r.Timestamp)}
	}
	return r.Timestamp, nil
}

func fieldTimestamp(name string, loc *time.Location) (func(Record) (int64, error), error) {
	if name == "" {
		name = DefaultTimestampField
	}
	path := strings.Split(name, ".")
	for _, p := range path {
		if p == "" {
			return nil, &ConfigError{Key: "timestamp.field", Value: name, Reason: "has an empty path element"}
		}
	}
	what := fmt.Sprintf("timestamp field %q", name)
	return func(r Record) (int64, error) {
		l := lookup{r: r}
		v, reason, err := l.at(path)
		if err != nil {
			return 0, &RecordError{What: what, Reason: "decode value", Err: err}
		}
		if reason != "" {
			return 0, &RecordError{What: what, Reason: reason}
		}
		return valueMillis(v, loc, what)
	}, nil
}

// valueMillis reads the types the reference's RecordFieldTimestampExtractor
// takes: Avro timestamps (and dates, as their UTC midnight), int and long
// epoch milliseconds, and strings of either kind.
func valueMillis(v any, loc *time.Location, what string) (int64, error) {
	switch x := v.(type) {
	case time.Time:
		return x.UnixMilli(), nil
	case int32:
		return int64(x), nil
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case string:
		ms, err := parseTimestamp(x, loc)
		if err != nil {
			if errors.Is(err, errNotISO) {
				err = nil // the reason says it all
			}
			return 0, &RecordError{What: what, Reason: fmt.Sprintf("%q is neither epoch milliseconds nor an ISO-8601 date-time", x), Err: err}
		}
		return ms, nil
	}
	return 0, &RecordError{What: what, Reason: "value is " + typeName(v) + "; a timestamp field must be a timestamp, date, int, long or string"}
}

// isoLayouts are the ISO-8601 forms accepted, most specific first; all are
// extended forms, as Joda's ISODateTimeFormat.dateTimeParser reads. Go also
// takes a fraction after the seconds without it being in the layout.
var isoLayouts, isoZoned = func() (layouts []string, zoned map[string]bool) {
	zoned = map[string]bool{}
	for _, clock := range []string{"15:04:05", "15:04", "15"} {
		for _, zone := range []string{"Z07:00", "Z0700", "Z07"} {
			layouts = append(layouts, "2006-01-02T"+clock+zone)
			zoned["2006-01-02T"+clock+zone] = true
		}
		layouts = append(layouts, "2006-01-02T"+clock)
	}
	return append(layouts, "2006-01-02", "2006-01"), zoned
}()

// parseTimestamp reads a string of digits as epoch milliseconds, and
// anything else as an ISO-8601 / RFC 3339 date-time. A date-time without a
// zone is a wall-clock time in loc, converted as bucket starts are.
func parseTimestamp(s string, loc *time.Location) (int64, error) {
	if isInteger(s) {
		return strconv.ParseInt(s, 10, 64)
	}
	norm := strings.ToUpper(s)
	if len(norm) > 10 && norm[10] == ' ' {
		norm = norm[:10] + "T" + norm[11:]
	}
	for _, layout := range isoLayouts {
		t, err := time.Parse(layout, norm)
		if err != nil {
			continue
		}
		if isoZoned[layout] {
			return t.UnixMilli(), nil
		}
		return localToUTC(t.UnixMilli(), loc), nil
	}
	return 0, errNotISO
}

// errNotISO marks a string that is no date-time at all.
var errNotISO = errors.New("no ISO-8601 form matches")

func isInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
