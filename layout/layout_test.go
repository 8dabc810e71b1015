package layout

import "testing"

func TestEncodedDir(t *testing.T) {
	topic := Topic{TopicsDir: "/data/topics", LogsDir: "/data/logs", Name: "orders"}
	name := FinalName("orders", 3, 0, 9, 10, ".avro")
	cases := []struct {
		final, want string
		ok          bool
	}{
		{topic.FinalPath("partition=3", 3, 0, 9, 10, ".avro"), "partition=3", true},
		{topic.FinalPath("year=2026/month=03/day=29/hour=01", 3, 0, 9, 10, ".avro"), "year=2026/month=03/day=29/hour=01", true},
		{"/data/topics/orders//region=eu/./" + name, "region=eu", true}, // as path.Join would have cleaned it
		{"/data/topics/orders/" + name, "", false},                      // directly in the topic directory
		{"/data/topics/orders-v2/partition=3/" + name, "", false},       // another topic sharing the prefix
		{"/elsewhere/orders/partition=3/" + name, "", false},            // another topics.dir
		{"/data/topics/orders/+tmp/partition=3/" + name, "", false},     // temp files are not committed data
		{"/data/topics/orders/region=eu/+tmp/" + name, "", false},
		{"/data/topics/+tmp/orders/3/00000000000000000001/x.avro", "", false},
		// a compacted generation belongs to the directory it replaces (§12)
		{topic.CompactedDir("year=2026/month=03/day=29/hour=01") + "/" + name, "year=2026/month=03/day=29/hour=01", true},
		{"/data/topics/orders/+compacted/" + name, "", false},
	}
	for _, c := range cases {
		got, ok := topic.EncodedDir(c.final)
		if got != c.want || ok != c.ok {
			t.Errorf("EncodedDir(%q) = %q, %v; want %q, %v", c.final, got, ok, c.want, c.ok)
		}
	}
}
