package chaos

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfigDefaultsAndPorts(t *testing.T) {
	c, err := LoadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Loopback() || c.Port("namenode") != 8020 || c.Port("datanode") != 9866 || c.Port("hms") != 9083 ||
		c.Port("registry") != 8081 || c.Port("kafka") != 9092 {
		t.Fatalf("test environment defaults: %+v", c)
	}
	if want := fmt.Sprintf("hdfs-sink-chaos-%d", os.Getpid()); c.Netns != want {
		t.Fatalf("netns %q, want %q: a name of this run's own", c.Netns, want)
	}
	staging := filepath.Join(t.TempDir(), "staging.json")
	os.WriteFile(staging, []byte(`{"kafka": "10.0.0.5:9092", "namenode": "nn1:8020", "datanodes": ["dn1:9866"],
		"metastore": "thrift://hms:9083", "registry": "https://sr.example:8443/apis", "no_testenv": true,
		"commands": {"namenode.kill": "ssh nn1 sudo systemctl kill -s KILL hadoop-hdfs-namenode"}}`), 0o644)
	c, err = LoadConfig(staging)
	if err != nil {
		t.Fatal(err)
	}
	if c.Loopback() || c.Port("registry") != 8443 {
		t.Fatalf("staging config: loopback=%v registry port %d", c.Loopback(), c.Port("registry"))
	}
	ctl := NewControl(c, "/repo")
	if !ctl.Has("namenode.kill") || ctl.Has("namenode.start") {
		t.Fatal("with no_testenv only the configured commands exist")
	}
}

func TestLoadConfigRefusesUnknownActionsAndKeys(t *testing.T) {
	for _, body := range []string{`{"commands": {"namenode.reboot": "x"}}`, `{"kafak": "x:1"}`, `{"kafka": "no-port"}`} {
		p := filepath.Join(t.TempDir(), "c.json")
		os.WriteFile(p, []byte(body), 0o644)
		if _, err := LoadConfig(p); err == nil {
			t.Errorf("%s: accepted", body)
		}
	}
}

func TestControlQuotesArguments(t *testing.T) {
	ctl := NewControl(Config{NoTestenv: true, Commands: map[string]string{"dfsadmin": "echo"}}, "/repo")
	out, err := ctl.Do(t.Context(), 10e9, "dfsadmin", "-setQuota", "1", "/a dir/it's")
	if err != nil || strings.TrimSpace(out) != "-setQuota 1 /a dir/it's" {
		t.Fatalf("Do = %q, %v", out, err)
	}
	if _, err := ctl.Do(t.Context(), 10e9, "kafka.kill"); err == nil {
		t.Fatal("an action without a command ran")
	}
}

func TestIsLoopback(t *testing.T) {
	if !IsLoopback("127.0.0.1:8020", "[::1]:9092") || IsLoopback("127.0.0.1:1", "10.1.2.3:4") || IsLoopback("nn1:8020") {
		t.Fatal("IsLoopback")
	}
}

func TestNetnsNamesFitInterfaces(t *testing.T) {
	n := NewNetns("n17-a-rather-long-namespace-name", true)
	if len(n.host) > 15 || len(n.peer) > 15 || n.host == n.peer || n.HostIP == n.DaemonIP {
		t.Fatalf("%+v", n)
	}
}

// TestLifetimesFlagGrowth: a goroutine count that climbs through a
// process's life is flagged; a flat one is not.
func TestLifetimesFlagGrowth(t *testing.T) {
	var b strings.Builder
	b.WriteString(strings.Join(sampleHeader, ",") + "\n")
	for i := 0; i < 80; i++ {
		row := []string{fmt.Sprint(i * 15), "100", "40", fmt.Sprint(30 + i), "20", "9"}
		for range sampleServices {
			row = append(row, "4", "0")
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	for i := 0; i < 80; i++ {
		row := []string{fmt.Sprint(1200 + i*15), "200", "40", "30", "20", "9"}
		for range sampleServices {
			row = append(row, "4", "0")
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	p := filepath.Join(t.TempDir(), "samples.csv")
	os.WriteFile(p, []byte(b.String()), 0o644)
	lts := Lifetimes(p)
	if len(lts) != 2 {
		t.Fatalf("%d lifetimes, want 2", len(lts))
	}
	if len(lts[0].LeakSuspicions) != 1 || !strings.HasPrefix(lts[0].LeakSuspicions[0], "goroutines") {
		t.Fatalf("growing goroutines not flagged: %v", lts[0].LeakSuspicions)
	}
	if len(lts[1].LeakSuspicions) != 0 {
		t.Fatalf("flat process flagged: %v", lts[1].LeakSuspicions)
	}
}

func TestStatusProblems(t *testing.T) {
	var st Status
	if st.Problems() != "" {
		t.Fatal("empty status has problems")
	}
	st.Connectors = []ConnStatus{{Name: "c", Kafka: &downStatus{Error: "dial tcp: refused", FailingSeconds: 12}}}
	if p := st.Problems(); !strings.Contains(p, "kafka failing for 12s: dial tcp: refused") {
		t.Fatalf("Problems = %q", p)
	}
}

func TestTableAndAllPassed(t *testing.T) {
	res := []Result{{Fault: "a", Outcome: "pass", Records: 10, RecoverySeconds: 1.25},
		{Fault: "b", Outcome: "not run: no command for x"}}
	tab := Table(res)
	if !strings.Contains(tab, "| a | pass | 10 | 0 | 1.2 | 0, 0 → 0, 0 |") || !AllPassed(res) {
		t.Fatalf("table:\n%s", tab)
	}
	res = append(res, Result{Fault: "c", Outcome: "FAIL: lost offset 3"})
	if AllPassed(res) {
		t.Fatal("a failed fault passed")
	}
}
