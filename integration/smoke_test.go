//go:build integration

// Package integration holds the tests that run against the real services of
// testenv/testenv.sh (`make integration`). The smoke tests here prove that
// every pinned service version interoperates with the project's libraries.
package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/colinmarc/hdfs/v2"
	"github.com/linkedin/goavro/v2"
	"github.com/riferrei/srclient"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/hive"
	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

func ctxFor(t *testing.T, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// Kafka 4.x KRaft broker <-> franz-go: produce one record, consume it back.
func TestSmokeKafkaProduceConsume(t *testing.T) {
	topic := itest.Topic(t, 1)
	ctx := ctxFor(t, time.Minute)

	prod := itest.KafkaClient(t, kgo.DefaultProduceTopic(topic), kgo.RequiredAcks(kgo.AllISRAcks()))
	want := &kgo.Record{Key: []byte("k1"), Value: []byte("v1")}
	if err := prod.ProduceSync(ctx, want).FirstErr(); err != nil {
		t.Fatalf("produce to %s: %v", topic, err)
	}

	cons := itest.KafkaClient(t, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for {
		fs := cons.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consume %s: no record before deadline: %v", topic, err)
		}
		for _, fe := range fs.Errors() {
			t.Fatalf("consume %s partition %d: %v", fe.Topic, fe.Partition, fe.Err)
		}
		recs := fs.Records()
		if len(recs) == 0 {
			continue
		}
		got := recs[0]
		if string(got.Key) != "k1" || string(got.Value) != "v1" || got.Offset != 0 {
			t.Fatalf("consumed key=%q value=%q offset=%d, want k1/v1 at offset 0", got.Key, got.Value, got.Offset)
		}
		return
	}
}

// HDFS 3.x NameNode + DataNode <-> colinmarc/hdfs: write a temp file,
// rename it into place, list the directory and read the file back.
func TestSmokeHDFSWriteRenameListRead(t *testing.T) {
	cl := itest.HDFSClient(t)
	dir := itest.HDFSDir(t, cl)
	tmp, final := path.Join(dir, "f.avro.tmp"), path.Join(dir, "f.avro")
	want := []byte("hello hdfs\n")

	w, err := cl.Create(tmp)
	if err != nil {
		t.Fatalf("create %s: %v", tmp, err)
	}
	if _, err := w.Write(want); err != nil {
		t.Fatalf("write %s: %v", tmp, err)
	}
	closeFile(t, w)
	if err := cl.Rename(tmp, final); err != nil {
		t.Fatalf("rename %s -> %s: %v", tmp, final, err)
	}

	infos, err := cl.ReadDir(dir)
	if err != nil {
		t.Fatalf("list %s: %v", dir, err)
	}
	var names []string
	for _, fi := range infos {
		names = append(names, fi.Name())
	}
	if !reflect.DeepEqual(names, []string{"f.avro"}) {
		t.Fatalf("list %s = %v, want [f.avro]", dir, names)
	}
	got, err := cl.ReadFile(final)
	if err != nil {
		t.Fatalf("read %s: %v", final, err)
	}
	if string(got) != string(want) {
		t.Fatalf("read %s = %q, want %q", final, got, want)
	}
}

type closer interface{ Close() error }

// closeFile retries while the NameNode reports the last block as still
// replicating (colinmarc/hdfs ErrReplicating): the DataNode's block report
// can trail the client's complete call.
func closeFile(t *testing.T, w closer) {
	t.Helper()
	var err error
	for i := range 8 {
		if err = w.Close(); err == nil {
			return
		}
		time.Sleep(time.Duration(50<<i) * time.Millisecond)
	}
	t.Fatalf("close: %v", err)
}

const smokeSchemaV1 = `{"type":"record","name":"Event","namespace":"itest",
 "fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"amount","type":"double"}]}`

// A new required field without a default breaks BACKWARD compatibility.
const smokeSchemaIncompatible = `{"type":"record","name":"Event","namespace":"itest",
 "fields":[{"name":"id","type":"long"},{"name":"name","type":"string"},{"name":"amount","type":"double"},
 {"name":"required_new","type":"string"}]}`

// Schema registry (Apicurio ccompat) <-> riferrei/srclient, through the
// base-path prefix: register, fetch by id with a fresh client (no cache),
// and see the default BACKWARD rule reject an incompatible version.
func TestSmokeRegistryRegisterFetch(t *testing.T) {
	itest.RequireRegistry(t)
	base := itest.RegistryURL()
	subject := itest.UniqueName(t, "itest_") + "-value"

	reg := srclient.NewSchemaRegistryClient(base)
	created, err := reg.CreateSchema(subject, smokeSchemaV1, srclient.Avro)
	if err != nil {
		t.Fatalf("register %s at %s: %v", subject, base, err)
	}
	t.Cleanup(func() { _ = reg.DeleteSubject(subject, false) })
	if created.ID() <= 0 {
		t.Fatalf("register %s: id %d, want > 0", subject, created.ID())
	}

	fetched, err := srclient.NewSchemaRegistryClient(base).GetSchema(created.ID())
	if err != nil {
		t.Fatalf("get schema id %d at %s: %v", created.ID(), base, err)
	}
	if !sameJSON(t, fetched.Schema(), smokeSchemaV1) {
		t.Fatalf("schema id %d = %s, want %s", created.ID(), fetched.Schema(), smokeSchemaV1)
	}
	if fetched.Codec() == nil {
		t.Fatalf("schema id %d: srclient built no Avro codec", created.ID())
	}

	if _, err := reg.CreateSchema(subject, smokeSchemaIncompatible, srclient.Avro); err == nil {
		t.Fatalf("registering a BACKWARD-incompatible schema under %s succeeded; want rejection (default compatibility not BACKWARD?)", subject)
	}
}

func sameJSON(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("not JSON: %v: %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

var smokeRecords = []map[string]any{
	{"id": int64(1), "name": "alpha", "amount": 1.5},
	{"id": int64(2), "name": "beta", "amount": 2.25},
	{"id": int64(3), "name": "gamma", "amount": -3.0},
}

// Hive Metastore 3.1 (via the project's hive package) + HDFS + Spark SQL:
// an EXTERNAL Avro table with avro.schema.literal over an HDFS directory
// holding a goavro OCF file, one partition, read back through Spark.
func TestSmokeMetastoreAvroTableReadBySpark(t *testing.T) {
	itest.RequireMetastore(t)
	itest.RequireSpark(t)
	fs := itest.HDFSClient(t)
	dir := itest.HDFSDir(t, fs)
	ctx := ctxFor(t, 2*time.Minute)

	db, table := itest.UniqueName(t, "itest_"), "events"
	tableDir := path.Join(dir, table)
	partDir := path.Join(tableDir, "dt=2026-01-01")
	writeOCF(t, fs, path.Join(partDir, "events+0+0000000000+0000000002.avro"))

	hc, err := hive.Dial(ctx, itest.MetastoreURI())
	if err != nil {
		t.Fatalf("dial %s: %v", itest.MetastoreURI(), err)
	}
	t.Cleanup(func() { hc.Close() })
	if err := hc.CreateDatabase(ctx, db, itest.HDFSURI()+path.Join(dir, db+".db")); err != nil {
		t.Fatalf("create database %s: %v", db, err)
	}
	err = hc.CreateTable(ctx, hive.Table{
		Database: db, Name: table, Location: itest.HDFSURI() + tableDir,
		Format: hive.FormatAvro, AvroSchema: smokeSchemaV1,
		PartitionKeys: []hive.Column{{Name: "dt", Type: "string"}},
	})
	if err != nil {
		t.Fatalf("create table %s.%s: %v", db, table, err)
	}
	t.Cleanup(func() {
		if err := hc.DropTable(context.Background(), db, table, false); err != nil {
			t.Logf("drop table %s.%s: %v", db, table, err)
		}
	})
	parts := []hive.Partition{{Values: []string{"2026-01-01"}, Location: itest.HDFSURI() + partDir}}
	if err := hc.AddPartitions(ctx, db, table, parts); err != nil {
		t.Fatalf("add partition: %v", err)
	}
	if err := hc.AddPartitions(ctx, db, table, parts); err != nil {
		t.Fatalf("add the same partition again (if-not-exists): %v", err)
	}
	names, err := hc.ListPartitionNames(ctx, db, table)
	if err != nil || !reflect.DeepEqual(names, []string{"dt=2026-01-01"}) {
		t.Fatalf("list partitions = %v, %v; want [dt=2026-01-01]", names, err)
	}
	got, err := hc.GetTable(ctx, db, table)
	if err != nil {
		t.Fatalf("get table: %v", err)
	}
	if got.Format != hive.FormatAvro || !sameJSON(t, got.AvroSchema, smokeSchemaV1) {
		t.Fatalf("get table: format %v schema %s; want avro with the created schema", got.Format, got.AvroSchema)
	}

	fq := db + "." + table
	res := itest.SparkSQL(t,
		"SELECT count(*) AS n FROM "+fq,
		"SELECT id, name, amount, dt FROM "+fq+" ORDER BY id",
		// spark-avro reading the same file without the metastore.
		fmt.Sprintf("SELECT count(*) AS n FROM avro.`%s`", itest.HDFSURI()+partDir),
	)
	if n := res[0][0]["n"]; n != float64(len(smokeRecords)) {
		t.Fatalf("Spark count(*) on %s = %v, want %d", fq, n, len(smokeRecords))
	}
	checkRows(t, res[1])
	if n := res[2][0]["n"]; n != float64(len(smokeRecords)) {
		t.Fatalf("spark-avro count(*) on %s = %v, want %d", partDir, n, len(smokeRecords))
	}
}

func checkRows(t *testing.T, rows itest.Rows) {
	t.Helper()
	if len(rows) != len(smokeRecords) {
		t.Fatalf("Spark returned %d rows, want %d: %v", len(rows), len(smokeRecords), rows)
	}
	for i, want := range smokeRecords {
		got := rows[i]
		if got["id"] != float64(want["id"].(int64)) || got["name"] != want["name"] ||
			got["amount"] != want["amount"] || got["dt"] != "2026-01-01" {
			t.Errorf("row %d = %v, want %v with dt=2026-01-01", i, got, want)
		}
	}
	keys := make([]string, 0, len(rows[0]))
	for k := range rows[0] {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if !reflect.DeepEqual(keys, []string{"amount", "dt", "id", "name"}) {
		t.Errorf("Spark columns = %v, want [amount dt id name]", keys)
	}
}

// writeOCF writes smokeRecords as a snappy-compressed Avro container file.
func writeOCF(t *testing.T, fs *hdfs.Client, name string) {
	t.Helper()
	if err := fs.MkdirAll(path.Dir(name), 0o777); err != nil {
		t.Fatalf("mkdir %s: %v", path.Dir(name), err)
	}
	w, err := fs.Create(name)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	ocf, err := goavro.NewOCFWriter(goavro.OCFConfig{W: w, Schema: smokeSchemaV1, CompressionName: goavro.CompressionSnappyLabel})
	if err != nil {
		t.Fatalf("ocf writer: %v", err)
	}
	recs := make([]any, len(smokeRecords))
	for i, r := range smokeRecords {
		recs[i] = r
	}
	if err := ocf.Append(recs); err != nil {
		t.Fatalf("append to %s: %v", name, err)
	}
	closeFile(t, w)
}
