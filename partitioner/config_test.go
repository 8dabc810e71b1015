package partitioner

import (
	"errors"
	"testing"
	"time"
)

func TestNewErrors(t *testing.T) {
	tb := func(change func(*Config)) Config {
		c := Config{Kind: KindTimeBased, Duration: time.Hour, PathFormat: HourlyPathFormat, Locale: "en", Location: time.UTC}
		change(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"kind", Config{Kind: "bogus"}, `partitioner: partitioner.class "bogus": must be default, field, timebased, daily or hourly`},
		{"no fields", Config{Kind: KindField}, `partitioner: partition.field.name "": must name at least one field`},
		{"empty path element", Config{Kind: KindField, FieldNames: []string{"a..b"}}, `partitioner: partition.field.name "a..b": has an empty path element`},
		{"field twice", Config{Kind: KindField, FieldNames: []string{"a", "a"}}, `partitioner: partition.field.name "a": is listed twice`},
		{"zero duration", tb(func(c *Config) { c.Duration = 0 }), `partitioner: partition.duration.ms "0": must be positive`},
		{"negative duration", tb(func(c *Config) { c.Duration = -time.Millisecond }), `partitioner: partition.duration.ms "-1": must be positive`},
		{"sub-millisecond", tb(func(c *Config) { c.Duration = 1500 * time.Microsecond }), `partitioner: partition.duration.ms "1.5ms": must be whole milliseconds`},
		{"empty format", tb(func(c *Config) { c.PathFormat = " " }), `partitioner: path.format " ": cannot be empty`},
		{"format only /", tb(func(c *Config) { c.PathFormat = "/" }), `partitioner: path.format "/": cannot be empty`},
		{"bad letter", tb(func(c *Config) { c.PathFormat = "'year'=YYYY/'q'=qq/" }), `partitioner: path.format "'year'=YYYY/'q'=qq": illegal pattern component "qq"`},
		{"no locale", tb(func(c *Config) { c.Locale = "" }), `partitioner: locale "": cannot be empty`},
		{"names need English", tb(func(c *Config) { c.Locale, c.PathFormat = "de_DE", "'month'=MMM" }),
			`partitioner: locale "de_DE": path.format prints names (MMM, E, a or G), which are built in for English only; use numeric fields`},
		{"no timezone", tb(func(c *Config) { c.Location = nil }), `partitioner: timezone "": cannot be empty`},
		{"daily needs a timezone", Config{Kind: KindDaily, Locale: "en"}, `partitioner: timezone "": cannot be empty`},
		{"extractor", tb(func(c *Config) { c.Extractor = "Custom" }), `partitioner: timestamp.extractor "Custom": must be Wallclock, Record or RecordField`},
		{"timestamp field", tb(func(c *Config) { c.Extractor, c.TimestampField = RecordField, "a." }), `partitioner: timestamp.field "a.": has an empty path element`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			var ce *ConfigError
			if !errors.As(err, &ce) || err.Error() != tc.want {
				t.Fatalf("New error %v, want *ConfigError %q", err, tc.want)
			}
		})
	}
}

func TestNewAccepts(t *testing.T) {
	tests := []struct {
		name   string
		cfg    Config
		fields []string
	}{
		// Daily and Hourly use their fixed layout whatever Duration and PathFormat say.
		{"daily", Config{Kind: KindDaily, Locale: "en", Location: time.UTC, PathFormat: "x"}, []string{"year", "month", "day"}},
		{"hourly", Config{Kind: KindHourly, Locale: "en_US", Location: time.UTC, Duration: -1}, []string{"year", "month", "day", "hour"}},
		{"numeric format in any locale", Config{Kind: KindTimeBased, Duration: time.Minute, PathFormat: "'d'=dd.MM.yyyy",
			Locale: "de-DE", Location: time.UTC}, []string{"d"}},
		{"English names", Config{Kind: KindTimeBased, Duration: time.Hour, PathFormat: "'m'=MMM", Locale: "EN", Location: time.UTC}, []string{"m"}},
		{"field", Config{Kind: KindField, FieldNames: []string{"a.b", "c"}}, []string{"a.b", "c"}},
	}
	for _, tc := range tests {
		p, err := New(tc.cfg)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if got := p.Fields(); len(got) != len(tc.fields) || got[0] != tc.fields[0] {
			t.Errorf("%s: Fields = %q, want %q", tc.name, got, tc.fields)
		}
	}
}
