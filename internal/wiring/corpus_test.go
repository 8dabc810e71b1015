package wiring

import (
	"bufio"
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/internal/conftest"
)

var update = flag.Bool("update", false, "rewrite golden files (configs/testdata/corpus/expected) from the current output")

const corpusDir = "../../configs/testdata/corpus"

// corpusEntry is one line of the corpus manifest.
type corpusEntry struct{ connector, worker, outcome string }

func readManifest(t *testing.T) []corpusEntry {
	f, err := os.Open(filepath.Join(corpusDir, "manifest.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []corpusEntry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) != 3 {
			t.Fatalf("manifest line %q: want connector, worker, outcome", sc.Text())
		}
		out = append(out, corpusEntry{fields[0], fields[1], fields[2]})
	}
	return out
}

// TestPublishedConnectorFiles runs check (Check) on every published
// connector file of the corpus, unchanged, with a published worker file,
// and compares everything it prints with a golden file. Files the
// manifest calls "ok" must pass; the others must fail with the
// golden error. At least 20 published files must pass or fail only for a
// documented unsupported feature; files of ours (written for the corpus
// where no published one shows a feature) must pass and are not counted.
func TestPublishedConnectorFiles(t *testing.T) {
	t.Setenv("HADOOP_USER_NAME", "etl") // the default HDFS user, not this machine's
	t.Setenv("KRB5_CONFIG", "")         // the default krb5.conf, /etc/krb5.conf under the corpus's root
	conftest.NoConnectEnv(t)
	hostRoot = filepath.Join(corpusDir, "root")
	t.Cleanup(func() { hostRoot = "" })
	// git keeps no file modes but the executable bit: a keytab readable by
	// others is warned about, so give the corpus's the mode a keytab has.
	if err := os.Chmod(filepath.Join(hostRoot, "tmp", "connect.keytab"), 0o600); err != nil {
		t.Fatal(err)
	}
	counted := map[string]bool{}
	for _, e := range readManifest(t) {
		name := strings.TrimSuffix(e.connector, filepath.Ext(e.connector)) + "--" + strings.TrimSuffix(e.worker, ".properties")
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			passed := Check(Files{Worker: filepath.Join(corpusDir, "workers", e.worker),
				Config: filepath.Join(corpusDir, "connectors", e.connector)}, &out, &out)
			if want := e.outcome == "ok" || e.outcome == "ours"; passed != want {
				t.Errorf("passed %v, want %v (%s)\n%s", passed, want, e.outcome, out.String())
			}
			golden(t, filepath.Join(corpusDir, "expected", name+".out"), out.String())
		})
		if e.outcome != "connect-fails" && e.outcome != "ours" {
			counted[e.connector] = true
		}
	}
	if len(counted) < 20 {
		t.Fatalf("%d published connector files pass or fail only for unsupported features, want at least 20", len(counted))
	}
}

func golden(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("golden file: %v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s\n got:\n%s\nwant:\n%s", file, got, want)
	}
}
