package configs

import (
	"strings"
	"testing"
	"time"
)

// TestDirsStayUnderTheStorePath: topics.dir and logs.dir are joined under
// the store URL's path, and a timebased path.format under the topic's
// directory; ".." that leads out of them is refused, naming the key.
func TestDirsStayUnderTheStorePath(t *testing.T) {
	for _, tc := range []struct {
		key, value string
		err        string // "" when accepted
		topicsDir  string // TopicsDir("t") when accepted and key is topics.dir
	}{
		{"topics.dir", "../other", "must stay under the store URL's path", ""},
		{"topics.dir", "/../other", "must stay under the store URL's path", ""},
		{"topics.dir", "a/../../other", "must stay under the store URL's path", ""},
		{"topics.dir", "${topic}/../../x", "must stay under the store URL's path", ""},
		{"topics.dir", "..", "must stay under the store URL's path", ""},
		{"topics.dir", "a/..", "not that path itself", ""},
		{"topics.dir", "a/../b", "", "/data/b"},
		{"topics.dir", "/topics/${topic}", "", "/data/topics/t"},
		{"logs.dir", "../../etc", "must stay under the store URL's path", ""},
		{"logs.dir", "wal/./${topic}", "", ""},
		{"path.format", "'..'/YYYY", "lead out of the topic's directory", ""},
		{"path.format", "YYYY/../MM", "lead out of the topic's directory", ""},
		{"path.format", "'year'=YYYY/'..'", "lead out of the topic's directory", ""},
		{"path.format", "'year'=YYYY/'month'=MM", "", ""},
		{"path.format", "'y..'=YYYY", "", ""},
	} {
		t.Run(tc.key+"="+tc.value, func(t *testing.T) {
			body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020/data","flush.size":"1",
				"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081",
				"partitioner.class":"TimeBased","partition.duration.ms":"3600000","locale":"en","timezone":"UTC",
				"path.format":"'year'=YYYY"`
			if tc.key == "path.format" {
				body = strings.Replace(body, `"path.format":"'year'=YYYY"`, `"path.format":"`+tc.value+`"`, 1)
			} else {
				body += `,"` + tc.key + `":"` + tc.value + `"`
			}
			conns, _, err := ParseFile("c.json", []byte(body+"}}"), nil)
			switch {
			case tc.err == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.key+` = "`+tc.value+`": `) || !strings.Contains(err.Error(), tc.err)):
				t.Fatalf("error %v, want one naming %s and saying %q", err, tc.key, tc.err)
			case tc.topicsDir != "" && conns[0].TopicsDir("t") != tc.topicsDir:
				t.Errorf("TopicsDir = %q, want %q", conns[0].TopicsDir("t"), tc.topicsDir)
			}
		})
	}
}

// TestPadWidthBound: filename.offset.zero.pad.width is bounded by the
// 255-byte name limit: 121 digits twice still leave room for a
// one-character topic's partition 0 with the longest extension; 122 do not.
func TestPadWidthBound(t *testing.T) {
	for width, ok := range map[string]bool{"1": true, "10": true, "121": true, "122": false, "1000000": false, "0": false} {
		body := `{"name":"c","config":{"topics":"t","hdfs.url":"hdfs://nn:8020","flush.size":"1","bootstrap.servers":"k:9092",
			"value.converter.schema.registry.url":"http://r:8081","filename.offset.zero.pad.width":"` + width + `"}}`
		_, _, err := ParseFile("c.json", []byte(body), nil)
		if (err == nil) != ok {
			t.Errorf("width %s: %v, want accepted %v", width, err, ok)
		}
	}
	if got := len("t+0++") + 2*maxPadWidth + len(".parquet"); got > 255 || got+2 <= 255 {
		t.Errorf("maxPadWidth %d makes the shortest name %d bytes: not the widest that fits 255", maxPadWidth, got)
	}
}

// TestRetryBackoffZero: retry.backoff.ms=0 would retry a failing service
// in a loop without a pause; every user of the setting gets the default
// instead, and the file's author is told.
func TestRetryBackoffZero(t *testing.T) {
	c, warns := connectorWith(t, nil, `,"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081","retry.backoff.ms":"0"`)
	if c.RetryBackoff != 5*time.Second {
		t.Errorf("RetryBackoff = %v, want the default 5s", c.RetryBackoff)
	}
	if got := strings.Join(warnStrings(warns), "\n"); !strings.Contains(got, `connector "c": retry.backoff.ms: 0 would retry a failing service without a pause: the default 5000 is used`) {
		t.Errorf("warnings:\n%s", got)
	}
	c, _ = connectorWith(t, nil, `,"bootstrap.servers":"k:9092","value.converter.schema.registry.url":"http://r:8081","retry.backoff.ms":"250"`)
	if c.RetryBackoff != 250*time.Millisecond {
		t.Errorf("RetryBackoff = %v, want 250ms", c.RetryBackoff)
	}
}
