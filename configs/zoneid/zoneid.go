// Package zoneid reads a time zone the way Java's java.time.ZoneId.of
// does, so that a connector's timezone names the same zone here as in
// Kafka Connect (partition paths and rotation schedules depend on it).
package zoneid

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Reason says what Parse accepts, for messages.
const Reason = `must be a time zone as Java's ZoneId reads it: a region such as "Europe/Berlin" or "UTC", or an offset such as "+05:30", "Z" or "GMT-3"`

// regionRE is the form ZoneId.of requires of a region id.
var regionRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9~/._+-]+$`)

// Parse reads a time zone the way java.time.ZoneId.of does: "Z", an
// offset (+h, +hh, +hh:mm, +hhmm, +hh:mm:ss, +hhmmss, or with a UTC, GMT
// or UT prefix), or a region id from the time zone database. Go's zone
// data is embedded, so the result does not depend on the host.
func Parse(v string) (*time.Location, error) {
	if v == "Z" {
		return time.FixedZone(v, 0), nil
	}
	if v[0] == '+' || v[0] == '-' {
		return offsetZone(v, v)
	}
	for _, prefix := range []string{"UTC", "GMT", "UT"} {
		rest, ok := strings.CutPrefix(v, prefix)
		if ok && rest == "" {
			return time.FixedZone(v, 0), nil
		}
		if ok && (rest[0] == '+' || rest[0] == '-') {
			return offsetZone(v, rest)
		}
	}
	if !regionRE.MatchString(v) || v == "Local" {
		return nil, errors.New("not a region id")
	}
	return time.LoadLocation(v)
}

// offsetZone parses ZoneOffset.of's forms, within ±18:00.
func offsetZone(name, off string) (*time.Location, error) {
	sign, digits := 1, off[1:]
	if off[0] == '-' {
		sign = -1
	}
	parts, err := offsetParts(digits)
	if err != nil {
		return nil, err
	}
	h, m, s := parts[0], parts[1], parts[2]
	secs := h*3600 + m*60 + s
	if h > 18 || m > 59 || s > 59 || secs > 18*3600 {
		return nil, errors.New("offset out of range")
	}
	return time.FixedZone(name, sign*secs), nil
}

// offsetParts splits h, hh, hh:mm, hhmm, hh:mm:ss or hhmmss.
func offsetParts(d string) ([3]int, error) {
	var out [3]int
	var fields []string
	switch {
	case len(d) <= 2:
		fields = []string{d}
	case strings.Contains(d, ":"):
		fields = strings.Split(d, ":")
	case len(d) == 4 || len(d) == 6:
		for i := 0; i < len(d); i += 2 {
			fields = append(fields, d[i:i+2])
		}
	default:
		return out, errors.New("bad offset")
	}
	if len(fields) > 3 || (len(fields) > 1 && len(fields[0]) != 2) {
		return out, errors.New("bad offset")
	}
	for i, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || f == "" || (i > 0 && len(f) != 2) || strings.HasPrefix(f, "+") {
			return out, errors.New("bad offset")
		}
		out[i] = n
	}
	return out, nil
}
