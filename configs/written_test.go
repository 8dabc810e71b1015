package configs

import (
	"reflect"
	"strings"
	"testing"
)

// TestWrittenKeepsPlaceholders: a file's settings as written, in each
// shape, with references unresolved and nothing of the worker or the
// defaults added.
func TestWrittenKeepsPlaceholders(t *testing.T) {
	ref := "${file:/etc/secrets/registry.properties:user.info}"
	for _, tt := range []struct {
		source, data, name string
		want               map[string]string
	}{
		{"orders.json", `{"name": "orders", "config": {"topics": "orders", "flush.size": 3, "value.converter.basic.auth.user.info": "` + ref + `"}}`,
			"orders", map[string]string{"name": "orders", "topics": "orders", "flush.size": "3", "value.converter.basic.auth.user.info": ref}},
		{"flat.json", `{"topics": "a,b", "tasks.max": null}`, "flat", map[string]string{"name": "flat", "topics": "a,b"}},
		{"orders.properties", "name=orders\ntopics=orders\nhdfs.url=" + ref + "\n", "orders",
			map[string]string{"name": "orders", "topics": "orders", "hdfs.url": ref}},
		{"export.json", `{"a": {"info": {"name": "a", "config": {"topics": "x"}}}, "b": {"info": {"name": "b", "config": {"topics": "y"}}}}`,
			"b", map[string]string{"name": "b", "topics": "y"}},
	} {
		got, err := Written(tt.source, []byte(tt.data), tt.name)
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.source, got, err, tt.want)
		}
	}
	if _, err := Written("export.json", []byte(`{"a": {"info": {"name": "a", "config": {}}}}`), "c"); err == nil || !strings.Contains(err.Error(), `export.json: holds no connector "c"`) {
		t.Fatalf("a connector the file does not hold: %v", err)
	}
}
