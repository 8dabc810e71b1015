package daemon

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// TestEveryExtraColumnConfigsAcceptsIsWritten ties configs to sink: each
// hdfs.sink.extra.columns name configs accepts (configs.ExtraColumnNames)
// is a column kafka_<name> of the committed files. A name configs accepts
// and the sink's table lacks fails here (the connector has no encoder for
// it) instead of at a user's first record.
func TestEveryExtraColumnConfigsAcceptsIsWritten(t *testing.T) {
	f := newDaemonFixture(t, "extras")
	c := f.connectorWith("extras", map[string]string{"hdfs.sink.extra.columns": strings.Join(configs.ExtraColumnNames, ",")})
	f.run([]*configs.Connector{c})
	f.produce("extras", 5)
	f.waitFor("a commit, or the connector failed", func() bool { return f.committed("extras") == 1 || f.state("extras") == "failed" })
	if f.state("extras") == "failed" {
		cs := f.d.board.get("extras")
		t.Fatalf("the connector failed on the extra columns %v: %v", configs.ExtraColumnNames, cs.err)
	}
	f.stop()
	if code := f.wait(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
	got := committedColumns(t, filepath.Join(f.dir, "extras", "topics"))
	for _, name := range configs.ExtraColumnNames {
		if !slices.Contains(got, "kafka_"+name) {
			t.Errorf("extra column %q: no kafka_%s in the committed file's columns %v", name, name, got)
		}
	}
}

// committedColumns are the top-level field names of the one committed Avro
// file under dir.
func committedColumns(t *testing.T, dir string) []string {
	t.Helper()
	var file string
	_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() && !strings.Contains(p, "+tmp") && strings.HasSuffix(p, ".avro") {
			file = p
		}
		return nil
	})
	r, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ocf, err := goavro.NewOCFReader(r)
	if err != nil {
		t.Fatal(err)
	}
	var s struct{ Fields []struct{ Name string } }
	if err := json.Unmarshal([]byte(ocf.Codec().Schema()), &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fl := range s.Fields {
		names = append(names, fl.Name)
	}
	return names
}
