package hive

import (
	"context"
	"strings"

	hms "github.com/beltran/gohive/hive_metastore"
)

// SetPartitionParams sets parameters of a registered partition, keeping
// its others (get_partition, then alter_partition): setting the same
// values again changes nothing, so the call is idempotent. A partition not
// registered yet is an *Error of kind ErrNotFound.
func (c *Client) SetPartitionParams(ctx context.Context, db, table string, values []string, params map[string]string) error {
	const op = "set partition parameters"
	object := db + "." + table + "/" + strings.Join(values, "/")
	var part *hms.Partition
	err := c.call(ctx, op, object, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		var err error
		part, err = m.GetPartition(ctx, db, table, values)
		return err
	})
	if err != nil {
		return err
	}
	if part.Parameters == nil {
		part.Parameters = map[string]string{}
	}
	for k, v := range params {
		part.Parameters[k] = v
	}
	return c.call(ctx, op, object, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		return m.AlterPartition(ctx, db, table, part)
	})
}

// PartitionParams returns the parameters of a registered partition (what
// operators and tests read back); a partition not registered is an *Error
// of kind ErrNotFound.
func (c *Client) PartitionParams(ctx context.Context, db, table string, values []string) (map[string]string, error) {
	var part *hms.Partition
	err := c.call(ctx, "get partition", db+"."+table+"/"+strings.Join(values, "/"), func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		var err error
		part, err = m.GetPartition(ctx, db, table, values)
		return err
	})
	if err != nil {
		return nil, err
	}
	return part.Parameters, nil
}
