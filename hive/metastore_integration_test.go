//go:build integration

package hive

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	hms "github.com/beltran/gohive/hive_metastore"
)

// Runs the whole API against both real metastores: testenv/testenv.sh up
// starts Hive Metastore 3.1 on 127.0.0.1:9083 and 4.0 on 127.0.0.1:9084;
// HDFS_SINK_HMS_URI and HDFS_SINK_HMS4_URI override.
//
//	go test -tags integration ./hive/

const itDB = "hdfs_sink_it"

// richSchema exercises every mapping the metastore has to accept.
const richSchema = `{"type":"record","name":"Rich","namespace":"it","fields":[
 {"name":"id","type":"long","doc":"Schlüssel – 鍵 🙂"},
 {"name":"CamelCase","type":"string"},
 {"name":"day","type":{"type":"int","logicalType":"date"}},
 {"name":"ts","type":{"type":"long","logicalType":"timestamp-micros"}},
 {"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":12,"scale":3}]},
 {"name":"uid","type":{"type":"string","logicalType":"uuid"}},
 {"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B"]}},
 {"name":"hash","type":{"type":"fixed","name":"Hash","size":16}},
 {"name":"tags","type":{"type":"array","items":"string"}},
 {"name":"attrs","type":{"type":"map","values":["null","double"]}},
 {"name":"addr","type":{"type":"record","name":"Addr","fields":[{"name":"city","type":"string"},{"name":"zip","type":["null","int"]}]}},
 {"name":"either","type":["null","int","string"]},
 {"name":"country","type":"string"}]}`

// metastores are the metastores every test runs against, by version.
func metastores() []struct{ version, uri string } {
	uri := func(env, def string) string {
		if u := os.Getenv(env); u != "" {
			return u
		}
		return def
	}
	return []struct{ version, uri string }{
		{"3.1", uri("HDFS_SINK_HMS_URI", "thrift://127.0.0.1:9083")},
		{"4.0", uri("HDFS_SINK_HMS4_URI", "thrift://127.0.0.1:9084")},
	}
}

// onEachMetastore runs test once per metastore version, with a client.
func onEachMetastore(t *testing.T, within time.Duration, test func(t *testing.T, ctx context.Context, c *Client)) {
	for _, m := range metastores() {
		t.Run("hms"+m.version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), within)
			defer cancel()
			c, err := Dial(ctx, m.uri, WithDialTimeout(5*time.Second))
			if err != nil {
				t.Fatalf("Dial Hive Metastore %s at %s: %v (is testenv up?)", m.version, m.uri, err)
			}
			defer c.Close()
			test(t, ctx, c)
		})
	}
}

func TestMetastoreIntegration(t *testing.T) {
	onEachMetastore(t, 3*time.Minute, testMetastoreAPI)
}

func testMetastoreAPI(t *testing.T, ctx context.Context, c *Client) {

	for range 2 {
		if err := c.CreateDatabase(ctx, itDB, ""); err != nil {
			t.Fatalf("CreateDatabase: %v", err)
		}
	}
	name := fmt.Sprintf("rich_%d", time.Now().UnixNano())
	tbl := Table{
		Database: itDB, Name: name, Location: "hdfs://127.0.0.1:8020/hdfs-sink-it/" + name,
		Format: FormatAvro, AvroSchema: richSchema, Comment: "integration ✓",
		PartitionKeys: []Column{{Name: "country"}},
	}
	if err := c.CreateTable(ctx, tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	defer func() {
		if err := c.DropTable(context.Background(), itDB, name, false); err != nil {
			t.Errorf("DropTable: %v", err)
		}
	}()
	if err := c.CreateTable(ctx, tbl); !errors.Is(err, ErrTableExists) {
		t.Fatalf("second CreateTable: %v", err)
	}

	got, err := c.GetTable(ctx, itDB, name)
	if err != nil {
		t.Fatalf("GetTable: %v", err)
	}
	checkLegacyGetTable(t, ctx, c, name)
	cols, _ := HiveColumns(richSchema)
	want := cols[:len(cols)-1] // country is the partition key
	want[1].Name = "camelcase" // the metastore lower-cases names
	if !reflect.DeepEqual(got.Columns, want) {
		t.Errorf("columns\n got %+v\nwant %+v", got.Columns, want)
	}
	if got.Format != FormatAvro || got.AvroSchema != tbl.avroLiteral() || got.Comment != tbl.Comment ||
		got.Location != tbl.Location || !reflect.DeepEqual(got.PartitionKeys, []Column{{Name: "country", Type: "string"}}) {
		t.Errorf("GetTable %+v", got)
	}

	parts := []Partition{
		{Values: []string{"DE"}, Location: tbl.Location + "/country=DE"},
		{Values: []string{"FR"}, Location: tbl.Location + "/country=FR"},
	}
	for range 2 {
		if err := c.AddPartitions(ctx, itDB, name, parts); err != nil {
			t.Fatalf("AddPartitions: %v", err)
		}
	}
	names, err := c.ListPartitionNames(ctx, itDB, name)
	if err != nil || !reflect.DeepEqual(names, []string{"country=DE", "country=FR"}) {
		t.Fatalf("ListPartitionNames = %v, %v", names, err)
	}

	evolved := tbl
	evolved.AvroSchema = strings.Replace(richSchema, `{"name":"country"`,
		`{"name":"added","type":["null","long"],"default":null},{"name":"country"`, 1)
	if err := c.AlterTable(ctx, evolved, true); err != nil {
		t.Fatalf("AlterTable cascade: %v", err)
	}
	got, err = c.GetTable(ctx, itDB, name)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(got.Columns); n != len(want)+1 || got.Columns[n-1].Name != "added" || got.AvroSchema != evolved.avroLiteral() {
		t.Errorf("after alter: %+v", got)
	}
	if err := c.AlterTable(ctx, evolved, false); err != nil {
		t.Fatalf("AlterTable: %v", err)
	}

	if _, err := c.GetTable(ctx, itDB, "does_not_exist"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing table: %v", err)
	}
	if err := c.DropTable(ctx, itDB, "does_not_exist", false); !errors.Is(err, ErrNotFound) {
		t.Errorf("drop missing table: %v", err)
	}
	bad := evolved
	bad.PartitionKeys = []Column{{Name: "country"}, {Name: "day2"}}
	if err := c.AlterTable(ctx, bad, false); err == nil || IsRetryable(err) {
		t.Errorf("changing partition keys: %v", err)
	} else {
		t.Logf("changing partition keys: %v", err)
	}
}

func TestMetastoreIntegrationParquet(t *testing.T) {
	onEachMetastore(t, 2*time.Minute, testMetastoreParquet)
}

func testMetastoreParquet(t *testing.T, ctx context.Context, c *Client) {
	if err := c.CreateDatabase(ctx, itDB, ""); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("pq_%d", time.Now().UnixNano())
	tbl := Table{Database: itDB, Name: name, Location: "hdfs://127.0.0.1:8020/hdfs-sink-it/" + name,
		Format: FormatParquet, AvroSchema: richSchema,
		PartitionKeys: []Column{{Name: "year"}, {Name: "month"}}}
	if err := c.CreateTable(ctx, tbl); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}
	defer c.DropTable(context.Background(), itDB, name, false)
	got, err := c.GetTable(ctx, itDB, name)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != FormatParquet || got.AvroSchema != "" || len(got.Columns) != 13 {
		t.Errorf("GetTable %+v", got)
	}
	if err := c.AddPartitions(ctx, itDB, name, []Partition{{Values: []string{"2026", "08"}}}); err != nil {
		t.Fatalf("AddPartitions without location: %v", err)
	}
	names, err := c.ListPartitionNames(ctx, itDB, name)
	if err != nil || !reflect.DeepEqual(names, []string{"year=2026/month=08"}) {
		t.Fatalf("ListPartitionNames = %v, %v", names, err)
	}
}

// checkLegacyGetTable pins the difference the client is built around: Hive
// 4 removed the get_table call (Spark's Hive 2.3 client still makes it),
// while get_table_req, which GetTable uses, is in both.
func checkLegacyGetTable(t *testing.T, ctx context.Context, c *Client, name string) {
	err := c.call(ctx, "legacy get_table", name, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		_, err := m.GetTable(ctx, itDB, name)
		return err
	})
	hive4 := strings.HasSuffix(t.Name(), "hms4.0")
	switch {
	case hive4 && (err == nil || !strings.Contains(err.Error(), "get_table")):
		t.Errorf("Hive 4 answered the legacy get_table: %v", err)
	case !hive4 && err != nil:
		t.Errorf("Hive 3.1's legacy get_table: %v", err)
	}
	t.Logf("legacy get_table: %v", err)
}
