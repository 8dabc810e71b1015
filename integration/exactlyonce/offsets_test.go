//go:build integration

package exactlyonce

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/verify"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/wal/entry"
)

// send sends a JSON request to the daemon's API and decodes the answer
// into out (nil: ignored); it returns the status code.
func (d *daemon) send(method, p, body string, out any) int {
	d.t.Helper()
	req, err := http.NewRequest(method, d.api()+p, strings.NewReader(body))
	if err != nil {
		d.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		d.t.Fatalf("%s %s: %v", method, p, err)
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			d.t.Fatalf("%s %s: %v", method, p, err)
		}
	}
	return resp.StatusCode
}

// restOffsets is KIP-875's answer of GET …/offsets, by partition.
func (d *daemon) restOffsets(name string) map[int32]int64 {
	var doc struct {
		Offsets []struct {
			Partition struct {
				Topic     string `json:"kafka_topic"`
				Partition int32  `json:"kafka_partition"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"kafka_offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	if code := d.send("GET", "/connectors/"+name+"/offsets", "", &doc); code != 200 {
		d.t.Fatalf("GET offsets: %d", code)
	}
	out := map[int32]int64{}
	for _, o := range doc.Offsets {
		out[o.Partition.Partition] = o.Offset.Offset
	}
	return out
}

// walHead is the head entry of partition p's WAL.
func (s *setup) walHead(p int32) entry.Entry {
	s.t.Helper()
	ws := sink.WriteSettings{FS: s.fs, TopicsDir: func(string) string { return s.topicsDir() },
		LogsDir: func(string) string { return path.Join(s.base, "logs") }, Now: time.Now}
	rep, err := sink.InspectWAL(context.Background(), ws, s.topic, p)
	if err != nil || len(rep.Segments) == 0 || rep.Segments[len(rep.Segments)-1].Entry == nil {
		s.t.Fatalf("WAL of partition %d: %v %+v", p, err, rep)
	}
	return *rep.Segments[len(rep.Segments)-1].Entry
}

// TestOffsetsRoutesLikeOffsetsReset: a connector is stopped through the
// REST API; partition 0 is moved with PATCH …/offsets, partition 1 with
// `hdfs-sink offsets reset`, to the same offset. Both WAL heads say the
// same; after a resume each partition holds every record from there on
// exactly once, with the same skipped range, which verify reports alike.
func TestOffsetsRoutesLikeOffsetsReset(t *testing.T) {
	t.Parallel()
	s := newSetup(t, 2)
	counts := map[int32]int64{}
	cfg := s.connector("offs", map[string]string{"flush.size": "100", "rotate.interval.ms": "1000"})
	d := s.startWith(cfg, ops)
	s.produce(counts, 400) // offsets 0-199 of each partition
	s.waitCommitted(400, 2*time.Minute)
	until(t, "both partitions at 200 in GET offsets", time.Minute, func() bool {
		o := d.restOffsets("offs")
		return o[0] == 200 && o[1] == 200
	})
	to300 := func(p int32) string {
		return fmt.Sprintf(`{"offsets": [{"partition": {"kafka_topic": %q, "kafka_partition": %d}, "offset": {"kafka_offset": 300}}]}`, s.topic, p)
	}
	if code := d.send("PATCH", "/connectors/offs/offsets", to300(0), nil); code != 400 {
		t.Fatalf("PATCH of a running connector: %d, want 400", code)
	}
	if code := d.send("PUT", "/connectors/offs/stop", "", nil); code != 204 {
		t.Fatalf("stop: %d", code)
	}
	until(t, "STOPPED", time.Minute, func() bool { return d.connStatus("offs").Connector.State == "STOPPED" })
	s.produce(counts, 400) // 200-399 of each, while stopped
	if code := d.send("PATCH", "/connectors/offs/offsets", to300(0), nil); code != 200 {
		t.Fatalf("PATCH of partition 0 to 300: %d", code)
	}
	if code, out, errOut := s.tool("offsets", "reset", "--config", cfg, "--topic", s.topic, "--partition", "1", "--to", "300", "--yes"); code != 0 {
		t.Fatalf("offsets reset of partition 1 to 300: exit %d\n%s%s", code, out, errOut)
	}
	sameHeads(t, s.walHead(0), s.walHead(1))
	if o := d.restOffsets("offs"); o[0] != 300 || o[1] != 300 {
		t.Fatalf("GET offsets after both resets: %v", o)
	}
	if code := d.send("PUT", "/connectors/offs/resume", "", nil); code != 202 {
		t.Fatalf("resume: %d", code)
	}
	s.produce(counts, 400) // 400-599 of each
	s.waitCommitted(2*(200+300), 2*time.Minute)
	d.stop()
	s.noVerify = true // verify must report the skipped ranges: asserted below
	skip := map[int32][2]int64{0: {200, 300}, 1: {200, 300}}
	if _, err := verify.Check(t.Context(), s.fs, verify.Options{TopicsDir: s.topicsDir(), Topic: s.topic, Want: counts, SeqField: "seq", Skip: skip}); err != nil {
		t.Fatalf("exactly once from the new positions: %v", err)
	}
	code, reps := s.verifyJSON(cfg)
	for p := range 2 {
		v := reps[0].Partitions[p].Violations
		if code != 1 || len(v) != 1 || v[0].Kind != verify.KindHole || !strings.Contains(v[0].Detail, "offsets 200-299") {
			t.Fatalf("verify of partition %d after the resets: exit %d %+v", p, code, v)
		}
	}
}

// sameHeads: the claims of the REST API's change and of offsets reset
// differ only in who published them and when.
func sameHeads(t *testing.T, rest, tool entry.Entry) {
	t.Helper()
	for _, e := range []*entry.Entry{&rest, &tool} {
		e.Epoch, e.Owner, e.UnixMillis, e.Partition = "", "", 0, 0
	}
	if fmt.Sprintf("%+v", rest) != fmt.Sprintf("%+v", tool) || rest.Kind != entry.KindClaim || rest.CommittedOffset != 299 {
		t.Fatalf("WAL heads differ:\nREST:           %+v\noffsets reset:  %+v", rest, tool)
	}
}
