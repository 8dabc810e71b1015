package hdfs

import (
	"reflect"
	"testing"

	"github.com/colinmarc/hdfs/v2"
)

// keySettled reads the client's cache (reflection may read an unexported
// field; only settleDataKey writes one).
func keySettled(c *hdfs.Client) bool {
	return !reflect.ValueOf(c).Elem().FieldByName("encryptionKey").IsNil()
}

// TestSettleDataKey: the cache is filled exactly when the client wraps
// DataNode connections and the NameNode hands out no key. It also fails
// first when a library upgrade renames the field.
func TestSettleDataKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		protected bool
		encrypt   bool
		want      bool
	}{
		{"protection without encryption", true, false, true},
		{"no protection", false, false, false},
		{"encryption: the NameNode's key is fetched by the library", true, true, false},
		{"encryption without client protection", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &hdfs.Client{}
			if err := settleDataKey(c, tc.protected, hdfs.ServerDefaults{EncryptDataTransfer: tc.encrypt}); err != nil {
				t.Fatal(err)
			}
			if got := keySettled(c); got != tc.want {
				t.Fatalf("key cache settled = %v, want %v", got, tc.want)
			}
		})
	}
}
