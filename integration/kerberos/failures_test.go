//go:build integration

package kerberos

import (
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

// failStop bounds how long a refused login may take to stop the connector
// (and, with it the only connector, the process).
const failStop = 20 * time.Second

// TestKerberosRefusals: each setting the KDC or the NameNode refuses stops
// the connector within seconds, with an error that names the cause;
// nothing is retried as an outage.
func TestKerberosRefusals(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 1)
	sink := itest.KrbSinkPrincipal
	for name, tc := range map[string]struct {
		extra map[string]string
		want  string
	}{
		"wrong keytab": {map[string]string{"connect.hdfs.keytab": itest.Keytab("sink-stale")},
			"the keytab's key does not match the KDC's"},
		"principal not in the KDC": {map[string]string{"connect.hdfs.principal": "ghost@" + itest.KrbRealm, "connect.hdfs.keytab": itest.Keytab("ghost")},
			"the KDC does not know this principal"},
		"clock skew": {map[string]string{"hdfs.sink.krb5.conf": itest.KrbFile(itest.KrbSkewedKDCConf)},
			"clock and the KDC's differ"},
		"namenode principal unknown": {map[string]string{"hdfs.namenode.principal": "nn/nosuchhost@" + itest.KrbRealm},
			"the KDC does not know the NameNode principal nn/nosuchhost"},
		"namenode principal of another service": {map[string]string{"hdfs.namenode.principal": "hive/_HOST@" + itest.KrbRealm},
			"the NameNode refused the Kerberos authentication: is hive/_HOST its principal?"},
		// Found before anything runs, as `check` finds it.
		"keytab without the principal": {map[string]string{"connect.hdfs.keytab": itest.Keytab("hive")},
			"holds no key for " + sink},
	} {
		t.Run(name, func(t *testing.T) {
			d := s.start(s.connector("krb-refused", tc.extra))
			start := time.Now()
			err, exited := d.wait(failStop)
			if !exited {
				t.Fatalf("still running %v after start; want the connector stopped:\n%s", failStop, d.tail(20))
			}
			stopped := d.contains("connector FAILED") || d.contains("invalid configuration; nothing consumed")
			if err == nil || !stopped || !d.contains(tc.want) {
				t.Fatalf("exit %v after %v; want FAILED naming %q:\n%s", err, time.Since(start).Round(time.Millisecond), tc.want, d.tail(20))
			}
			if d.contains("store unreachable; retrying") {
				t.Errorf("a refusal was retried as an outage:\n%s", d.tail(20))
			}
			t.Logf("stopped after %v: %s", time.Since(start).Round(time.Millisecond), lineWith(d.text(), tc.want))
		})
	}
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestKerberosKDCUnreachableAtStart: with the KDC down, the connector
// waits and says so on every attempt, instead of failing or going quiet
// (an outage, not a refusal); once the KDC is back it logs in and every
// record is committed exactly once.
func TestKerberosKDCUnreachableAtStart(t *testing.T) {
	s := newSetup(t, 1)
	counts := map[int32]int64{}
	s.produce(counts, 500)
	testenv(t, "stop", "kdc")
	back := false
	t.Cleanup(func() {
		if !back {
			testenv(t, "start-kdc")
		}
	})
	d := s.start(s.connector("krb-nokdc", map[string]string{"retry.backoff.ms": "500"}))
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) && d.count("Kerberos KDC unreachable; retrying") < 3 {
		if _, exited := d.wait(time.Second); exited {
			t.Fatalf("exited while the KDC was unreachable:\n%s", d.tail(20))
		}
	}
	if n := d.count("Kerberos KDC unreachable; retrying"); n < 3 || d.contains("connector FAILED") {
		t.Fatalf("%d 'KDC unreachable' retries logged in 45s (want >= 3), or failed:\n%s", n, d.tail(20))
	}
	t.Logf("%s", lineWith(d.text(), "KDC unreachable"))
	testenv(t, "start-kdc")
	back = true
	s.waitCommitted(d, 500, 3*time.Minute)
	d.stop()
	s.check(counts)
}
