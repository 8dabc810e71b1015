package hive

import (
	"context"
	"errors"
	"testing"

	hms "github.com/beltran/gohive/hive_metastore"
)

func (f *fakeHMS) GetPartition(_ context.Context, db, table string, values []string) (*hms.Partition, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("get_partition"); err != nil {
		return nil, err
	}
	key := db + "." + table
	tbl, ok := f.tables[key]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: key + " table not found"}
	}
	p, ok := f.parts[key][partName(tbl, values)]
	if !ok {
		return nil, &hms.NoSuchObjectException{Message: "partition not found"}
	}
	return p, nil
}

func (f *fakeHMS) AlterPartition(_ context.Context, db, table string, p *hms.Partition) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.enter("alter_partition"); err != nil {
		return err
	}
	key := db + "." + table
	name := partName(f.tables[key], p.Values)
	if _, ok := f.parts[key][name]; !ok {
		return &hms.InvalidOperationException{Message: "alter of a missing partition"}
	}
	f.parts[key][name] = p
	return nil
}

// TestSetPartitionParams: parameters are added to what the partition has,
// twice is the same as once, and a partition not registered yet is
// ErrNotFound (the completeness marker then waits for the syncer).
func TestSetPartitionParams(t *testing.T) {
	ctx := context.Background()
	f, c := dialFake(t)
	if err := c.CreateDatabase(ctx, "sales", ""); err != nil {
		t.Fatal(err)
	}
	if err := c.CreateTable(ctx, ordersTable()); err != nil {
		t.Fatal(err)
	}
	err := c.SetPartitionParams(ctx, "sales", "orders", []string{"DE"}, map[string]string{"hdfs.sink.complete": "1"})
	if !errors.Is(err, ErrNotFound) {
		t.Fatalf("unregistered partition: %v, want ErrNotFound", err)
	}
	if err := c.AddPartitions(ctx, "sales", "orders", []Partition{{Values: []string{"DE"}, Location: "hdfs://nn:8020/topics/orders/country=DE"}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := c.SetPartitionParams(ctx, "sales", "orders", []string{"DE"}, map[string]string{"hdfs.sink.complete": "1"}); err != nil {
			t.Fatal(err)
		}
	}
	p := f.partition("sales.orders", "country=DE")
	if p.Parameters["hdfs.sink.complete"] != "1" || p.Sd.Location != "hdfs://nn:8020/topics/orders/country=DE" {
		t.Fatalf("partition after: params %v, location %q", p.Parameters, p.Sd.Location)
	}
	if params, err := c.PartitionParams(ctx, "sales", "orders", []string{"DE"}); err != nil || params["hdfs.sink.complete"] != "1" {
		t.Fatalf("PartitionParams = %v, %v", params, err)
	}
}
