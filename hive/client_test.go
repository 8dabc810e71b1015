package hive

import (
	"context"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	hms "github.com/beltran/gohive/hive_metastore"
)

const (
	schemaV1 = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"long","doc":"Bestellnummer ✓"},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"country","type":"string"}]}`
	schemaV2 = `{"type":"record","name":"Order","namespace":"shop","fields":[
		{"name":"id","type":"long","doc":"Bestellnummer ✓"},
		{"name":"ts","type":{"type":"long","logicalType":"timestamp-millis"}},
		{"name":"country","type":"string"},
		{"name":"amount","type":["null",{"type":"bytes","logicalType":"decimal","precision":9,"scale":2}],"default":null}]}`
)

func dialFake(t *testing.T, opts ...Option) (*fakeHMS, *Client) {
	t.Helper()
	f := newFakeHMS()
	addr := serveFake(t, f)
	c, err := Dial(context.Background(), "thrift://"+addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return f, c
}

func ordersTable() Table {
	return Table{
		Database: "sales", Name: "orders", Location: "hdfs://nn:8020/topics/orders",
		Format: FormatAvro, AvroSchema: schemaV1, Comment: "from kafka",
		PartitionKeys: []Column{{Name: "country"}},
	}
}

func TestClientAvroTableLifecycle(t *testing.T) {
	ctx := context.Background()
	f, c := dialFake(t)

	for range 2 { // the second create is a no-op
		if err := c.CreateDatabase(ctx, "sales", "hdfs://nn:8020/db/sales"); err != nil {
			t.Fatalf("CreateDatabase: %v", err)
		}
	}
	if err := c.CreateDatabase(ctx, "Logs", ""); err != nil {
		t.Fatalf("CreateDatabase default location: %v", err)
	}
	if got := f.database("sales").LocationUri; got != "hdfs://nn:8020/db/sales" {
		t.Errorf("explicit location %q", got)
	}
	if got := f.database("Logs").LocationUri; got != "hdfs://nn:8020/warehouse/logs.db" {
		t.Errorf("default location %q", got)
	}
	if err := c.CreateTable(ctx, ordersTable()); err != nil {
		t.Fatalf("CreateTable: %v", err)
	}

	// What reached the metastore.
	tt := f.table("sales.orders")
	if tt.TableType != "EXTERNAL_TABLE" || tt.Parameters["EXTERNAL"] != "TRUE" {
		t.Errorf("not external: type %q params %v", tt.TableType, tt.Parameters)
	}
	// The literal drops "country": it is a partition column, and a field of
	// the same name would make the column ambiguous.
	literalV1 := ordersTable().avroLiteral()
	if strings.Contains(literalV1, "country") || !strings.Contains(literalV1, `"ts"`) {
		t.Errorf("literal %s", literalV1)
	}
	if tt.Parameters["avro.schema.literal"] != literalV1 || tt.Parameters["comment"] != "from kafka" {
		t.Errorf("parameters %v", tt.Parameters)
	}
	sd := tt.Sd
	if sd.SerdeInfo.SerializationLib != avroSerDe || sd.InputFormat != avroInput || sd.OutputFormat != avroOutput {
		t.Errorf("storage %s / %s / %s", sd.SerdeInfo.SerializationLib, sd.InputFormat, sd.OutputFormat)
	}
	wantCols := []*hms.FieldSchema{
		{Name: "id", Type: "bigint", Comment: "Bestellnummer ✓"},
		{Name: "ts", Type: "timestamp"},
	} // country is a partition key, so not a data column
	if !reflect.DeepEqual(sd.Cols, wantCols) {
		t.Errorf("cols %v, want %v", sd.Cols, wantCols)
	}
	if len(tt.PartitionKeys) != 1 || *tt.PartitionKeys[0] != (hms.FieldSchema{Name: "country", Type: "string"}) {
		t.Errorf("partition keys %v", tt.PartitionKeys)
	}

	// Round trip through get_table_req.
	got, err := c.GetTable(ctx, "sales", "orders")
	if err != nil {
		t.Fatalf("GetTable: %v", err)
	}
	want := &Table{Database: "sales", Name: "orders", Location: "hdfs://nn:8020/topics/orders",
		Format: FormatAvro, AvroSchema: literalV1, Comment: "from kafka",
		Columns:       []Column{{Name: "id", Type: "bigint", Comment: "Bestellnummer ✓"}, {Name: "ts", Type: "timestamp"}},
		PartitionKeys: []Column{{Name: "country", Type: "string"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetTable\n got %+v\nwant %+v", got, want)
	}

	// Partitions: duplicates in one call and repeated calls are fine.
	parts := []Partition{
		{Values: []string{"DE"}, Location: "hdfs://nn:8020/topics/orders/country=DE"},
		{Values: []string{"FR"}, Location: "hdfs://nn:8020/topics/orders/country=FR"},
		{Values: []string{"DE"}, Location: "hdfs://nn:8020/topics/orders/country=DE"},
	}
	for range 2 {
		if err := c.AddPartitions(ctx, "sales", "orders", parts); err != nil {
			t.Fatalf("AddPartitions: %v", err)
		}
	}
	names, err := c.ListPartitionNames(ctx, "sales", "orders")
	if err != nil || !reflect.DeepEqual(names, []string{"country=DE", "country=FR"}) {
		t.Fatalf("ListPartitionNames = %v, %v", names, err)
	}
	p := f.partition("sales.orders", "country=FR")
	if p.Sd.Location != "hdfs://nn:8020/topics/orders/country=FR" || p.Sd.SerdeInfo.SerializationLib != avroSerDe ||
		!reflect.DeepEqual(p.Sd.Cols, wantCols) {
		t.Errorf("partition sd %+v", p.Sd)
	}

	// Schema evolution with CASCADE reaches the partitions and keeps what
	// the metastore stored.
	evolved := ordersTable()
	evolved.AvroSchema = schemaV2
	if err := c.AlterTable(ctx, evolved, true); err != nil {
		t.Fatalf("AlterTable: %v", err)
	}
	tt = f.table("sales.orders")
	if tt.Parameters["avro.schema.literal"] != evolved.avroLiteral() || tt.Parameters["transient_lastDdlTime"] == "" || tt.CreateTime == 0 {
		t.Errorf("after alter params %v create time %d", tt.Parameters, tt.CreateTime)
	}
	if n := len(tt.Sd.Cols); n != 3 || tt.Sd.Cols[2].Type != "decimal(9,2)" {
		t.Errorf("after alter cols %v", tt.Sd.Cols)
	}
	if n := len(f.partition("sales.orders", "country=DE").Sd.Cols); n != 3 {
		t.Errorf("cascade did not reach partition: %d cols", n)
	}
	if err := c.AlterTable(ctx, evolved, false); err != nil {
		t.Fatalf("AlterTable: %v", err)
	}
	if env := f.alterEnv; len(env) != 2 || env[0]["CASCADE"] != "true" || env[1]["CASCADE"] != "" {
		t.Errorf("alter environments %v", env)
	}

	if err := c.DropTable(ctx, "sales", "orders", false); err != nil {
		t.Fatalf("DropTable: %v", err)
	}
	if _, err := c.GetTable(ctx, "sales", "orders"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("GetTable after drop: %v", err)
	}
}

func TestClientParquetTable(t *testing.T) {
	ctx := context.Background()
	f, c := dialFake(t)
	tbl := Table{Database: "default", Name: "events", Location: "/topics/events", Format: FormatParquet,
		Columns:       []Column{{Name: "id", Type: "bigint"}, {Name: "payload", Type: "struct<a:int>", Comment: "p"}},
		PartitionKeys: []Column{{Name: "year"}, {Name: "month"}}}
	if err := c.CreateTable(ctx, tbl); err != nil {
		t.Fatal(err)
	}
	tt := f.table("default.events")
	if tt.Sd.SerdeInfo.SerializationLib != parquetSerDe || tt.Sd.InputFormat != parquetInput || tt.Sd.OutputFormat != parquetOutput {
		t.Errorf("storage %+v", tt.Sd)
	}
	if _, ok := tt.Parameters["avro.schema.literal"]; ok {
		t.Error("parquet table carries avro.schema.literal")
	}
	got, err := c.GetTable(ctx, "default", "events")
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != FormatParquet || !reflect.DeepEqual(got.Columns, tbl.Columns) || len(got.PartitionKeys) != 2 {
		t.Errorf("GetTable %+v", got)
	}
	err = c.AddPartitions(ctx, "default", "events", []Partition{{Values: []string{"2026"}}})
	if !errors.Is(err, ErrInvalidTable) || !strings.Contains(err.Error(), "default.events") {
		t.Errorf("wrong arity: %v", err)
	}
}

// Failures the metastore reports map to sentinels that keep its message
// and name the operation and object; none is retryable.
func TestClientServerErrors(t *testing.T) {
	ctx := context.Background()
	f, c := dialFake(t)
	if err := c.CreateTable(ctx, ordersTable()); !errors.Is(err, ErrNotFound) { // no database yet
		t.Fatalf("create table without database: %v", err)
	}
	if err := c.CreateDatabase(ctx, "sales", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, ordersTable()); err != nil {
		t.Fatal(err)
	}
	changedKeys := ordersTable()
	changedKeys.PartitionKeys = []Column{{Name: "country"}, {Name: "day"}}

	tests := []struct {
		name     string
		call     func() error
		kind     error
		contains []string
	}{
		{"create existing table", func() error { return c.CreateTable(ctx, ordersTable()) },
			ErrTableExists, []string{"create table sales.orders", "Table orders already exists"}},
		{"get missing table", func() error { _, err := c.GetTable(ctx, "sales", "nope"); return err },
			ErrNotFound, []string{"get table sales.nope", "table not found"}},
		{"alter missing table", func() error { t := ordersTable(); t.Name = "nope"; return c.AlterTable(ctx, t, false) },
			ErrNotFound, []string{"alter table sales.nope"}},
		{"alter partition keys", func() error { return c.AlterTable(ctx, changedKeys, false) },
			ErrInvalidOperation, []string{"alter table sales.orders", "partition keys can not be changed"}},
		{"partitions of missing table", func() error { return c.AddPartitions(ctx, "sales", "nope", []Partition{{Values: []string{"x"}}}) },
			ErrNotFound, []string{"add partitions sales.nope"}},
		{"list partitions of missing table", func() error { _, err := c.ListPartitionNames(ctx, "sales", "nope"); return err },
			ErrNotFound, []string{"list partitions sales.nope"}},
		{"drop missing table", func() error { return c.DropTable(ctx, "sales", "nope", false) },
			ErrNotFound, []string{"drop table sales.nope"}},
		{"meta exception", func() error {
			f.mu.Lock()
			f.failNext["create_database"] = &hms.MetaException{Message: "java.net.ConnectException: namenode"}
			f.mu.Unlock()
			return c.CreateDatabase(ctx, "other", "")
		}, ErrMetastore, []string{"create database other", "java.net.ConnectException: namenode"}},
		{"invalid object", func() error {
			f.mu.Lock()
			f.failNext["add_partitions_req"] = &hms.InvalidObjectException{Message: "bad location"}
			f.mu.Unlock()
			return c.AddPartitions(ctx, "sales", "orders", []Partition{{Values: []string{"x"}}})
		}, ErrInvalidObject, []string{"add partitions sales.orders", "bad location"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want kind %v", err, tt.kind)
			}
			if IsRetryable(err) {
				t.Errorf("%v reported retryable", err)
			}
			for _, s := range tt.contains {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q lacks %q", err, s)
				}
			}
		})
	}
	var meta *hms.MetaException
	f.mu.Lock()
	f.failNext["drop_table"] = &hms.MetaException{Message: "m"}
	f.mu.Unlock()
	if err := c.DropTable(ctx, "sales", "orders", false); !errors.As(err, &meta) || meta.Message != "m" {
		t.Errorf("Thrift exception not reachable with errors.As: %v", err)
	}
	if !errors.Is(ErrTableExists, ErrAlreadyExists) {
		t.Error("ErrTableExists should match ErrAlreadyExists")
	}
}

// Invalid input is rejected before anything is sent.
func TestClientLocalValidation(t *testing.T) {
	ctx := context.Background()
	f, c := dialFake(t)
	tests := []struct {
		name   string
		modify func(*Table)
		kind   error
	}{
		{"no database", func(t *Table) { t.Database = "" }, ErrInvalidTable},
		{"no name", func(t *Table) { t.Name = "" }, ErrInvalidTable},
		{"no format", func(t *Table) { t.Format = FormatUnknown }, ErrInvalidTable},
		{"avro without schema", func(t *Table) { t.AvroSchema = "" }, ErrInvalidTable},
		{"parquet without columns", func(t *Table) { t.Format, t.AvroSchema = FormatParquet, "" }, ErrInvalidTable},
		{"bad schema", func(t *Table) { t.AvroSchema = `{"type":"record"}` }, ErrInvalidSchema},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tbl := ordersTable()
			tt.modify(&tbl)
			before := len(f.callNames())
			for op, err := range map[string]error{"create": c.CreateTable(ctx, tbl), "alter": c.AlterTable(ctx, tbl, true)} {
				if !errors.Is(err, tt.kind) || IsRetryable(err) {
					t.Errorf("%s: error %v, want %v", op, err, tt.kind)
				}
			}
			if calls := f.callNames()[before:]; len(calls) != 0 {
				t.Errorf("RPCs sent for invalid input: %v", calls)
			}
		})
	}
	if err := c.AddPartitions(ctx, "sales", "orders", nil); err != nil {
		t.Errorf("empty AddPartitions: %v", err)
	}
}

func TestDialURIs(t *testing.T) {
	f := newFakeHMS()
	live := serveFake(t, f)
	dead := closedPort(t)
	tests := []struct {
		name, uri string
		kind      error // nil: success
	}{
		{"single", "thrift://" + live, nil},
		{"first dead", "thrift://" + dead + ", thrift://" + live, nil},
		{"all dead", "thrift://" + dead, ErrUnavailable},
		{"no scheme", live, ErrInvalidURI},
		{"wrong scheme", "http://" + live, ErrInvalidURI},
		{"empty", " , ", ErrInvalidURI},
		{"one bad among good", "thrift://" + live + ",nope", ErrInvalidURI},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Dial(context.Background(), tt.uri, WithDialTimeout(2*time.Second))
			if tt.kind == nil {
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				if _, err := c.ListPartitionNames(context.Background(), "x", "y"); !errors.Is(err, ErrNotFound) {
					t.Fatalf("call on dialled client: %v", err)
				}
				return
			}
			if !errors.Is(err, tt.kind) {
				t.Fatalf("error %v, want %v", err, tt.kind)
			}
			if got, want := IsRetryable(err), tt.kind == ErrUnavailable; got != want {
				t.Errorf("IsRetryable = %v, want %v", got, want)
			}
		})
	}
}

func TestParseURIsDefaultPort(t *testing.T) {
	got, err := parseURIs("thrift://hms1,thrift://hms2:9999")
	if err != nil || !reflect.DeepEqual(got, []string{"hms1:9083", "hms2:9999"}) {
		t.Fatalf("parseURIs = %v, %v", got, err)
	}
}

// closedPort returns an address nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// A cut connection is a retryable error, and the next call redials.
func TestClientReconnectsAfterNetworkFailure(t *testing.T) {
	ctx := context.Background()
	f := newFakeHMS()
	p := newProxy(t, serveFake(t, f))
	c, err := Dial(ctx, "thrift://"+p.addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.CreateDatabase(ctx, "a", ""); err != nil {
		t.Fatal(err)
	}
	p.cut()
	err = c.CreateDatabase(ctx, "b", "")
	if !IsRetryable(err) || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "create database b") {
		t.Fatalf("after cut: %v (retryable %v)", err, IsRetryable(err))
	}
	if err := c.CreateDatabase(ctx, "b", ""); err != nil {
		t.Fatalf("after redial: %v", err)
	}
}

// Deadlines and cancellation interrupt a call stuck on the server.
func TestClientHonoursContext(t *testing.T) {
	_, c := dialFake(t)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := c.GetTable(ctx, "default", "slow1")
	if !errors.Is(err, context.DeadlineExceeded) || !IsRetryable(err) || !strings.Contains(err.Error(), "get table default.slow1") {
		t.Fatalf("deadline: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("deadline honoured only after %v", d)
	}

	ctx, cancel = context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start = time.Now()
	_, err = c.GetTable(ctx, "default", "slow2")
	if !errors.Is(err, context.Canceled) || IsRetryable(err) {
		t.Fatalf("cancel: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("cancellation honoured only after %v", d)
	}
	if _, err := c.GetTable(ctx, "default", "t"); !errors.Is(err, context.Canceled) {
		t.Fatalf("already cancelled context: %v", err)
	}

	// The interrupted connections were replaced.
	if _, err := c.GetTable(context.Background(), "default", "t"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after interruptions: %v", err)
	}
}

// A caller queued behind a stuck call gives up when its context does.
func TestClientQueuedCallHonoursContext(t *testing.T) {
	f, c := dialFake(t, WithCallTimeout(time.Second))
	stuck := make(chan error, 1)
	go func() { _, err := c.GetTable(context.Background(), "default", "slow"); stuck <- err }()
	<-f.blocked // the slow call holds the connection (a sleep here lost the race on a loaded machine)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.GetTable(ctx, "default", "t")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("queued call: %v after %v", err, time.Since(start))
	}
	if err := <-stuck; !IsRetryable(err) {
		t.Fatalf("stuck call: %v", err)
	}
}

func TestClientCallTimeout(t *testing.T) {
	_, c := dialFake(t, WithCallTimeout(200*time.Millisecond))
	_, err := c.GetTable(context.Background(), "default", "slow")
	if !errors.Is(err, ErrUnavailable) || !IsRetryable(err) {
		t.Fatalf("call timeout: %v", err)
	}
}

// A peer that does not speak Thrift yields a retryable error.
func TestClientGarbageServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = conn.Write([]byte("HTTP/1.1 400 Bad Request\r\n\r\n"))
			_ = conn.Close()
		}
	}()
	c, err := Dial(context.Background(), "thrift://"+ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.GetTable(context.Background(), "d", "t"); !IsRetryable(err) {
		t.Fatalf("garbage reply: %v", err)
	}
}

func TestClientClose(t *testing.T) {
	_, c := dialFake(t)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.CreateDatabase(context.Background(), "x", ""); !errors.Is(err, ErrClosed) || IsRetryable(err) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestSetPartitionLocation: the switch of a compaction moves an existing
// partition (alter_partition), adds a missing one at the location, and a
// repeated call changes nothing; PartitionLocation reads it back.
func TestSetPartitionLocation(t *testing.T) {
	ctx := context.Background()
	f, c := dialFake(t)
	if err := c.CreateDatabase(ctx, "sales", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, ordersTable()); err != nil {
		t.Fatal(err)
	}
	old, gen := "hdfs://nn:8020/topics/orders/country=nl", "hdfs://nn:8020/topics/orders/+compacted/country=nl"
	if err := c.AddPartitions(ctx, "sales", "orders", []Partition{{Values: []string{"nl"}, Location: old}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.SetPartitionLocation(ctx, "sales", "orders", []string{"nl"}, gen); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := c.PartitionLocation(ctx, "sales", "orders", []string{"nl"}); err != nil || got != gen {
		t.Fatalf("location %q, %v; want %q", got, err, gen)
	}
	if err := c.SetPartitionLocation(ctx, "sales", "orders", []string{"de"}, gen+"x"); err != nil {
		t.Fatal(err)
	}
	if got := f.partition("sales.orders", "country=de").Sd.Location; got != gen+"x" {
		t.Errorf("added partition at %q", got)
	}
	alters := 0
	for _, call := range f.callNames() {
		if call == "alter_partition" {
			alters++
		}
	}
	if alters != 1 {
		t.Errorf("%d alter_partition calls, want 1 (the second switch is a no-op)", alters)
	}
}
