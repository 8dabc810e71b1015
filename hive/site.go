package hive

import (
	"encoding/xml"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Site is what hdfs-sink takes from hive.conf.dir: hive-site.xml, and
// metastore-site.xml when there is one (Hive 3's standalone metastore reads
// its metastore.* names from it). It says where the metastore is and how
// to talk to it.
type Site struct {
	File string
	// URIs is hive.metastore.uris as the file has it ("" when unset).
	URIs string
	// SASL is hive.metastore.sasl.enabled (or metastore.sasl.enabled): the
	// metastore wants Kerberos (GSSAPI) logins.
	SASL bool
	// Principal is hive.metastore.kerberos.principal (or
	// metastore.kerberos.principal), e.g. hive/_HOST@EXAMPLE.COM.
	Principal string
	// SSL is hive.metastore.use.SSL.
	SSL bool
	// SocketTimeout is hive.metastore.client.socket.timeout (or
	// metastore.client.socket.timeout): how long one metastore call may
	// take; 0 when unset.
	SocketTimeout time.Duration
}

// ErrUnsupportedSite is a hive-site.xml asking for a transport this client
// does not have.
var ErrUnsupportedSite = errors.New("the metastore client of hdfs-sink speaks plain Thrift or SASL (Kerberos), not TLS")

// LoadSite reads dir/hive-site.xml and dir/metastore-site.xml. Of their
// many settings hdfs-sink uses the metastore's URIs (when the connector file
// sets none), SASL and principal, and refuses SSL, which its client cannot
// speak; the rest are Hive's own. A missing hive-site.xml is an error: the
// reference only logs a warning and carries on with defaults.
func LoadSite(dir string) (Site, error) {
	s := Site{File: filepath.Join(dir, "hive-site.xml")}
	props, err := readSiteXML(s.File)
	if err != nil {
		return s, fmt.Errorf("hive.conf.dir %s: %w", dir, err)
	}
	ms, err := readSiteXML(filepath.Join(dir, "metastore-site.xml"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return s, fmt.Errorf("hive.conf.dir %s: %w", dir, err)
	}
	for k, v := range ms {
		if _, set := props[k]; !set {
			props[k] = v
		}
	}
	get := func(names ...string) string {
		for _, n := range names {
			if v := strings.TrimSpace(props[n]); v != "" {
				return v
			}
		}
		return ""
	}
	s.URIs = get("hive.metastore.uris", "metastore.thrift.uris")
	s.SASL = strings.EqualFold(get("hive.metastore.sasl.enabled", "metastore.sasl.enabled"), "true")
	s.Principal = get("hive.metastore.kerberos.principal", "metastore.kerberos.principal")
	s.SSL = strings.EqualFold(get("hive.metastore.use.SSL", "metastore.use.SSL"), "true")
	if s.SSL {
		return s, fmt.Errorf("%s: hive.metastore.use.SSL is true: %w", s.File, ErrUnsupportedSite)
	}
	if v := get("hive.metastore.client.socket.timeout", "metastore.client.socket.timeout"); v != "" {
		if s.SocketTimeout, err = parseHiveDuration(v); err != nil {
			return s, fmt.Errorf("%s: hive.metastore.client.socket.timeout: %w", s.File, err)
		}
	}
	return s, nil
}

// hiveUnits are the unit suffixes HiveConf's time values take.
var hiveUnits = []struct {
	names []string
	unit  time.Duration
}{
	{[]string{"ns", "nsec", "nanosecond", "nanoseconds"}, time.Nanosecond},
	{[]string{"us", "usec", "microsecond", "microseconds"}, time.Microsecond},
	{[]string{"ms", "msec", "millisecond", "milliseconds"}, time.Millisecond},
	{[]string{"s", "sec", "second", "seconds"}, time.Second},
	{[]string{"m", "min", "minute", "minutes"}, time.Minute},
	{[]string{"h", "hour", "hours"}, time.Hour},
	{[]string{"d", "day", "days"}, 24 * time.Hour},
}

// parseHiveDuration reads a HiveConf time value: a whole number with an
// optional unit ("600s", "10min", "5000ms"); without one, seconds (the
// socket timeout's unit in HiveConf).
func parseHiveDuration(v string) (time.Duration, error) {
	v = strings.ToLower(strings.TrimSpace(v))
	digits := strings.TrimRightFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	suffix := strings.TrimSpace(v[len(digits):])
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a positive whole number with a unit such as 600s or 10min", v)
	}
	if suffix == "" {
		return time.Duration(n) * time.Second, nil
	}
	for _, u := range hiveUnits {
		if slices.Contains(u.names, suffix) {
			return time.Duration(n) * u.unit, nil
		}
	}
	return 0, fmt.Errorf("%q: unknown unit %q (ms, s, min, h, d)", v, suffix)
}

// readSiteXML reads a Hadoop-style <configuration><property> file.
func readSiteXML(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc struct {
		Property []struct {
			Name  string `xml:"name"`
			Value string `xml:"value"`
		} `xml:"property"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	out := make(map[string]string, len(doc.Property))
	for _, p := range doc.Property {
		out[strings.TrimSpace(p.Name)] = p.Value
	}
	return out, nil
}

// CheckURIs validates a hive.metastore.uris value as Dial reads it.
func CheckURIs(uris string) error {
	_, err := parseURIs(uris)
	return err
}
