package hive

import (
	"context"
	"errors"
	"testing"
)

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
