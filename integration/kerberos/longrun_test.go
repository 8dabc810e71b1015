//go:build integration

package kerberos

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// durationEnv reads a duration override (make test-kerberos-long sets them).
func durationEnv(t *testing.T, key string, def time.Duration) time.Duration {
	t.Helper()
	v := os.Getenv(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s=%q: %v", key, v, err)
	}
	return d
}

// produceFor produces batches until dur has passed.
func (s *setup) produceFor(counts map[int32]int64, dur time.Duration) {
	s.t.Helper()
	for end := time.Now().Add(dur); time.Now().Before(end); {
		s.produce(counts, 100)
		time.Sleep(time.Second)
	}
}

var problemLine = regexp.MustCompile(`level=(ERROR|WARN)[^\n]*`)

// runtimeProblems is every error or warning line except the configuration
// warnings logged once at start (the documented limits of docs/kerberos.md,
// which check prints too).
func runtimeProblems(log string) []string {
	var out []string
	for _, l := range problemLine.FindAllString(log, -1) {
		if !strings.Contains(l, "msg=config ") {
			out = append(out, l)
		}
	}
	return out
}

// TestKerberosLongRun: the sink principal's tickets last 2 minutes. A run
// longer than that (HDFS_SINK_KRB_RUN, 150 s here; `make
// test-kerberos-long` runs 5 minutes) must show renewals and no error; then
// a KDC outage longer than a ticket's lifetime (HDFS_SINK_KRB_OUTAGE) must
// be logged and survived, and once the KDC is back the login recovers and
// every record is committed exactly once.
func TestKerberosLongRun(t *testing.T) {
	run := durationEnv(t, "HDFS_SINK_KRB_RUN", 150*time.Second)
	outage := durationEnv(t, "HDFS_SINK_KRB_OUTAGE", 150*time.Second)
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	d := s.start(s.connector("krb-long", map[string]string{"flush.size": "200", "rotate.interval.ms": "2000"}))
	s.produceFor(counts, run)
	s.waitCommitted(d, total(counts), 2*time.Minute)
	renewals := d.count("kerberos ticket renewed from keytab")
	if min := int(run / (96 * time.Second)); renewals < max(min, 1) {
		t.Fatalf("%d renewals in a %v run of 2-minute tickets, want >= %d:\n%s", renewals, run, max(min, 1), d.tail(30))
	}
	if p := runtimeProblems(d.text()); len(p) > 0 {
		t.Fatalf("errors or warnings during a run with working Kerberos:\n%s", strings.Join(p, "\n"))
	}
	t.Logf("phase 1: %v, %d records, %d renewals, no error", run, total(counts), renewals)

	testenv(t, "stop", "kdc")
	kdcBack := false
	t.Cleanup(func() {
		if !kdcBack {
			testenv(t, "start-kdc")
		}
	})
	s.produceFor(counts, outage)
	if !d.contains("kerberos ticket renewal failed; retrying") {
		t.Fatalf("a %v KDC outage left no renewal failure in the log:\n%s", outage, d.tail(30))
	}
	testenv(t, "start-kdc")
	kdcBack = true
	s.produce(counts, 1000)
	s.waitCommitted(d, total(counts), 4*time.Minute)
	deadline := time.Now().Add(time.Minute)
	for !renewedAfterFailure(d.text()) && time.Now().Before(deadline) {
		time.Sleep(time.Second)
	}
	if !renewedAfterFailure(d.text()) {
		t.Fatalf("no renewal after the last failed one, a minute after the KDC's return:\n%s", d.tail(30))
	}
	if d.contains("connector FAILED") {
		t.Fatalf("the connector failed during the KDC outage:\n%s", d.tail(30))
	}
	d.stop()
	rep := s.check(counts)
	t.Logf("after a %v KDC outage: %d records exactly once in %d files; log: %d renewal failures, %d renewals",
		outage, rep.Records, len(rep.Files), d.count("kerberos ticket renewal failed"), d.count("kerberos ticket renewed from keytab"))
}

// renewedAfterFailure: the log has a successful renewal after its last
// failed one (the KDC's return was noticed).
func renewedAfterFailure(log string) bool {
	i := strings.LastIndex(log, "kerberos ticket renewal failed")
	return i >= 0 && strings.Contains(log[i:], "kerberos ticket renewed from keytab")
}
