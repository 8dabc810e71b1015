package partitioner

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeBased writes records to a directory per time bucket, formatted with a
// Joda path.format in a time zone, as the reference's TimeBasedPartitioner
// (and its Daily and Hourly subclasses) do.
type TimeBased struct {
	durMs   int64
	format  string
	layout  jodaLayout
	loc     *time.Location
	fields  []string
	extract func(Record) (int64, error)
}

// NewTimeBased builds a time-based partitioner from cfg's Duration,
// PathFormat, Locale, Location, Extractor, TimestampField and Now. Its
// checks follow the reference's order and wording.
func NewTimeBased(cfg Config) (*TimeBased, error) {
	p := &TimeBased{loc: cfg.Location}
	var err error
	if p.durMs, err = durationMillis(cfg.Duration); err != nil {
		return nil, err
	}
	if p.format, p.layout, err = pathFormat(cfg.PathFormat); err != nil {
		return nil, err
	}
	if err = checkLocale(cfg.Locale, p.layout); err != nil {
		return nil, err
	}
	if cfg.Location == nil {
		return nil, &ConfigError{Key: "timezone", Reason: "cannot be empty"}
	}
	if p.extract, err = extractor(cfg); err != nil {
		return nil, err
	}
	p.fields = pathFields(p.format)
	return p, nil
}

func durationMillis(d time.Duration) (int64, error) {
	switch {
	case d <= 0:
		return 0, &ConfigError{Key: "partition.duration.ms", Value: strconv.FormatInt(d.Milliseconds(), 10), Reason: "must be positive"}
	case d%time.Millisecond != 0:
		return 0, &ConfigError{Key: "partition.duration.ms", Value: d.String(), Reason: "must be whole milliseconds"}
	}
	return d.Milliseconds(), nil
}

// pathFormat removes one trailing "/" as the reference does, and compiles
// the rest.
func pathFormat(format string) (string, jodaLayout, error) {
	if strings.TrimSpace(format) == "" || format == "/" {
		return "", nil, &ConfigError{Key: "path.format", Value: format, Reason: "cannot be empty"}
	}
	format = strings.TrimSuffix(format, "/")
	l, err := compileJoda(format)
	if err != nil {
		return "", nil, &ConfigError{Key: "path.format", Value: format, Reason: err.Error()}
	}
	return format, l, nil
}

func checkLocale(locale string, l jodaLayout) error {
	if strings.TrimSpace(locale) == "" {
		return &ConfigError{Key: "locale", Reason: "cannot be empty"}
	}
	lang, _, _ := strings.Cut(strings.ReplaceAll(locale, "-", "_"), "_")
	if l.hasText() && !strings.EqualFold(lang, "en") {
		return &ConfigError{Key: "locale", Value: locale,
			Reason: "path.format prints names (MMM, E, a or G), which are built in for English only; use numeric fields"}
	}
	return nil
}

// pathFields names the Hive partition columns as the reference's
// TimeBasedSchemaGenerator does: for each "/"-separated part of the format,
// the text before "=" without quotes.
func pathFields(format string) []string {
	parts := strings.Split(format, "/")
	fields := make([]string, len(parts))
	for i, p := range parts {
		name, _, _ := strings.Cut(p, "=")
		fields[i] = strings.ReplaceAll(name, "'", "")
	}
	return fields
}

// maxAbsMillis bounds the timestamps accepted (about 285,000 years either
// side of 1970), so the zone arithmetic below cannot overflow.
const maxAbsMillis = 1 << 53

// Encode formats the start of the record's time bucket with path.format.
func (p *TimeBased) Encode(r Record) (string, error) {
	dir, _, err := p.EncodeTimed(r)
	return dir, err
}

// EncodeTimed is Encode that also returns the record time (epoch
// milliseconds) the directory was chosen by.
func (p *TimeBased) EncodeTimed(r Record) (string, int64, error) {
	ms, err := p.extract(r)
	if err != nil {
		return "", 0, err
	}
	if ms > maxAbsMillis || ms < -maxAbsMillis {
		return "", 0, &RecordError{What: "timestamp", Reason: fmt.Sprintf("%d ms since 1970 is out of range", ms)}
	}
	return p.layout.format(p.bucket(ms)), ms, nil
}

// Span is the encoded directory of the bucket holding instant ms and the
// end of its time range (epoch milliseconds): every instant filed into
// that directory is before end, so the directory is complete once every
// record time before end has been committed. Buckets are cut on the local
// wall clock, so a directory may hold two stretches of time: the wall clock
// of a fall-back overlap repeats, and end is the later stretch's end.
func (p *TimeBased) Span(ms int64) (dir string, end int64) {
	ms = max(min(ms, maxAbsMillis), -maxAbsMillis)
	bucket := p.bucket(ms)
	start := bucket.UnixMilli()
	localEnd := floorDiv(ms+offsetMillis(ms, p.loc), p.durMs)*p.durMs + p.durMs
	// The last instant filed here is just before localEnd - offset, for
	// whichever offset was in effect at that instant: try every offset the
	// zone has around the bucket (one, or two and more across transitions).
	end = start + 1
	for tr := start - maxZoneOffsetMillis; tr < localEnd+maxZoneOffsetMillis; tr = nextTransition(tr, p.loc) {
		off := offsetMillis(tr, p.loc)
		if c := localEnd - off; c > end && offsetMillis(c-1, p.loc) == off {
			end = c
		}
	}
	return p.layout.format(bucket), end
}

// maxZoneOffsetMillis bounds any zone's offset from UTC (±18 h in Java).
const maxZoneOffsetMillis = 18 * 3600 * 1000

// bucket returns the start of the bucket holding instant ms, in the
// partitioner's location. As in the reference, buckets are cut on the local
// wall clock: floor((ms + offset) / duration) × duration, turned back into
// an instant with Joda's non-strict convertLocalToUTC. Unlike the reference,
// which divides with Java's truncation, this floors, so times before 1970
// fall in their own bucket instead of the one after.
func (p *TimeBased) bucket(ms int64) time.Time {
	local := ms + offsetMillis(ms, p.loc)
	start := floorDiv(local, p.durMs) * p.durMs
	return time.UnixMilli(localToUTC(start, p.loc)).In(p.loc)
}

// Fields are the column names of path.format, e.g. year, month, day, hour.
func (p *TimeBased) Fields() []string { return append([]string(nil), p.fields...) }

// Values returns the formatted time parts of an encoded path. Time-based
// paths are not escaped, as in the reference.
func (p *TimeBased) Values(encoded string) ([]string, error) {
	return splitPath(encoded, p.fields, false)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

func offsetMillis(ms int64, loc *time.Location) int64 {
	_, off := time.UnixMilli(ms).In(loc).Zone()
	return int64(off) * 1000
}

// nextTransition is Joda's DateTimeZone.nextTransition: the next instant
// after ms when the zone's offset or name changes, MaxInt64 if none.
func nextTransition(ms int64, loc *time.Location) int64 {
	_, end := time.UnixMilli(ms).In(loc).ZoneBounds()
	if end.IsZero() {
		return math.MaxInt64
	}
	return end.UnixMilli()
}

// localToUTC is Joda's DateTimeZone.convertLocalToUTC(local, false). It is
// copied rather than replaced by time.Date because the two differ in a DST
// gap west of Greenwich: for America/New_York's missing 02:00, Joda gives
// 03:00 EDT and Go 01:00 EST. In an overlap they agree, and either
// occurrence prints the same wall clock.
func localToUTC(local int64, loc *time.Location) int64 {
	offLocal := offsetMillis(local, loc)
	off := offsetMillis(local-offLocal, loc)
	if offLocal != off && offLocal < 0 {
		// Only western zones need the gap check: for eastern ones off is
		// already the later offset (Joda's own reasoning).
		if nextTransition(local-offLocal, loc) != nextTransition(local-off, loc) {
			off = offLocal
		}
	}
	return local - off
}
