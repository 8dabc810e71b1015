package hive

import (
	"context"
	"errors"
	"fmt"
	"strings"

	hms "github.com/beltran/gohive/hive_metastore"
)

// CreateDatabase creates a database; an existing one is success. An empty
// locationURI means Hive's default, <warehouse>/<name>.db, computed from
// the "default" database's location: the Go bindings cannot send a null
// location, and Hive 3 rejects an empty one.
func (c *Client) CreateDatabase(ctx context.Context, name, locationURI string) error {
	const op = "create database"
	if locationURI == "" {
		var err error
		if locationURI, err = c.defaultDatabaseLocation(ctx, op, name); err != nil {
			return err
		}
	}
	db := &hms.Database{Name: name, LocationUri: locationURI, Parameters: map[string]string{}}
	err := c.call(ctx, op, name, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		return m.CreateDatabase(ctx, db)
	})
	if errors.Is(err, ErrAlreadyExists) {
		return nil
	}
	return err
}

// defaultDatabaseLocation is where Hive would put database name: beside
// the default database, whose location is the warehouse root.
func (c *Client) defaultDatabaseLocation(ctx context.Context, op, name string) (string, error) {
	var root string
	err := c.call(ctx, op, name, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		db, err := m.GetDatabase(ctx, "default")
		if err == nil {
			root = db.LocationUri
		}
		return err
	})
	if err != nil {
		return "", err
	}
	if root == "" {
		return "", &Error{Op: op, Object: name, Kind: ErrServer, Message: "default database has no location"}
	}
	return strings.TrimSuffix(root, "/") + "/" + strings.ToLower(name) + ".db", nil
}

// CreateTable creates t as an EXTERNAL table. An existing table yields an
// error matching ErrTableExists.
func (c *Client) CreateTable(ctx context.Context, t Table) error {
	tt, err := t.toThrift()
	if err != nil {
		return err
	}
	err = c.call(ctx, "create table", t.object(), func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		return m.CreateTable(ctx, tt)
	})
	var e *Error
	if errors.As(err, &e) && e.Kind == ErrAlreadyExists {
		e.Kind = ErrTableExists
	}
	return err
}

// GetTable reads a table through get_table_req, which exists in Hive 2.3
// to 4 (Hive 4 dropped get_table). A missing table yields ErrNotFound.
func (c *Client) GetTable(ctx context.Context, db, name string) (*Table, error) {
	tt, err := c.getTable(ctx, "get table", db, name)
	if err != nil {
		return nil, err
	}
	return fromThrift(tt), nil
}

func (c *Client) getTable(ctx context.Context, op, db, name string) (*hms.Table, error) {
	req := hms.NewGetTableRequest()
	req.DbName, req.TblName = db, name
	var tt *hms.Table
	err := c.call(ctx, op, db+"."+name, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		res, err := m.GetTableReq(ctx, req)
		if err == nil {
			tt = res.GetTable()
		}
		return err
	})
	if err == nil && tt == nil {
		return nil, &Error{Op: op, Object: db + "." + name, Kind: ErrServer, Message: "reply without table"}
	}
	return tt, err
}

// AlterTable replaces the columns, storage format, Avro schema, comment
// and (if set) location of an existing table, keeping everything else the
// metastore holds (owner, create time, other parameters). With cascade the
// column change is applied to every partition too (ALTER ... CASCADE), so
// old partitions read with the new schema. PartitionKeys, if set, must match
// the table's: Hive refuses to change them.
func (c *Client) AlterTable(ctx context.Context, t Table, cascade bool) error {
	const op = "alter table"
	if err := t.validate(); err != nil {
		return &Error{Op: op, Object: t.object(), Kind: ErrInvalidTable, Err: err}
	}
	cols, err := t.dataColumns()
	if err != nil {
		return &Error{Op: op, Object: t.object(), Kind: ErrInvalidSchema, Err: err}
	}
	tt, err := c.getTable(ctx, op, t.Database, t.Name)
	if err != nil {
		return err
	}
	applyAlter(tt, t, cols)
	env := hms.NewEnvironmentContext()
	env.Properties = map[string]string{}
	if cascade {
		env.Properties[envCascade] = "true"
	}
	return c.call(ctx, op, t.object(), func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		return m.AlterTableWithEnvironmentContext(ctx, t.Database, t.Name, tt, env)
	})
}

// applyAlter writes t's managed fields into the stored table tt.
func applyAlter(tt *hms.Table, t Table, cols []Column) {
	if tt.Parameters == nil {
		tt.Parameters = map[string]string{}
	}
	if tt.Sd == nil {
		tt.Sd = &hms.StorageDescriptor{NumBuckets: -1, Parameters: map[string]string{}}
	}
	tt.Sd.Cols = fieldSchemas(cols)
	if t.Location != "" {
		tt.Sd.Location = t.Location
	}
	t.storage(tt.Sd, tt.Parameters)
	if t.Comment != "" {
		tt.Parameters[paramComment] = t.Comment
	} else {
		delete(tt.Parameters, paramComment)
	}
	if len(t.PartitionKeys) > 0 {
		tt.PartitionKeys = fieldSchemas(partitionKeys(t.PartitionKeys))
	}
}

// AddPartitions registers partitions with add_partitions_req(ifNotExists),
// so existing ones are left alone and the call is idempotent. Each
// partition's storage descriptor is the table's with the partition's
// location.
func (c *Client) AddPartitions(ctx context.Context, db, table string, parts []Partition) error {
	const op = "add partitions"
	if len(parts) == 0 {
		return nil
	}
	tt, err := c.getTable(ctx, op, db, table)
	if err != nil {
		return err
	}
	req := hms.NewAddPartitionsRequest()
	req.DbName, req.TblName, req.IfNotExists, req.NeedResult_ = db, table, true, false
	if req.Parts, err = thriftPartitions(tt, parts); err != nil {
		return &Error{Op: op, Object: db + "." + table, Kind: ErrInvalidTable, Err: err}
	}
	return c.call(ctx, op, db+"."+table, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		_, err := m.AddPartitionsReq(ctx, req)
		return err
	})
}

// thriftPartitions checks arity and drops duplicates, which the metastore
// rejects even with ifNotExists.
func thriftPartitions(tt *hms.Table, parts []Partition) ([]*hms.Partition, error) {
	seen := make(map[string]bool, len(parts))
	out := make([]*hms.Partition, 0, len(parts))
	for _, p := range parts {
		if len(p.Values) != len(tt.PartitionKeys) {
			return nil, fmt.Errorf("partition %q has %d values, table has %d partition keys",
				p.Values, len(p.Values), len(tt.PartitionKeys))
		}
		key := strings.Join(p.Values, "\x00")
		if seen[key] {
			continue
		}
		seen[key] = true
		tp := hms.NewPartition()
		tp.DbName, tp.TableName, tp.Values = tt.DbName, tt.TableName, p.Values
		tp.Parameters = map[string]string{}
		tp.Sd = copySD(tt.Sd, p.Location)
		out = append(out, tp)
	}
	return out, nil
}

// copySD copies the table's storage descriptor (deep enough that the
// partitions do not share maps or slices) with another location.
func copySD(sd *hms.StorageDescriptor, location string) *hms.StorageDescriptor {
	if sd == nil {
		return &hms.StorageDescriptor{Location: location, NumBuckets: -1, Parameters: map[string]string{}}
	}
	cp := *sd
	cp.Location = location
	cp.Cols = append([]*hms.FieldSchema(nil), sd.Cols...)
	cp.Parameters = copyMap(sd.Parameters)
	if sd.SerdeInfo != nil {
		serde := *sd.SerdeInfo
		serde.Parameters = copyMap(sd.SerdeInfo.Parameters)
		cp.SerdeInfo = &serde
	}
	return &cp
}

func copyMap(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// ListPartitionNames returns every partition name of a table as the
// metastore spells it, "k=v/k=v" with Hive's escaping of special
// characters in values.
func (c *Client) ListPartitionNames(ctx context.Context, db, table string) ([]string, error) {
	var names []string
	err := c.call(ctx, "list partitions", db+"."+table, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		var err error
		names, err = m.GetPartitionNames(ctx, db, table, -1)
		return err
	})
	return names, err
}

// DropTable drops a table; a missing one yields ErrNotFound. Hive deletes
// the data of an EXTERNAL table only if it has external.table.purge=true,
// whatever deleteData says.
func (c *Client) DropTable(ctx context.Context, db, name string, deleteData bool) error {
	return c.call(ctx, "drop table", db+"."+name, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		return m.DropTable(ctx, db, name, deleteData)
	})
}

// SetPartitionLocation points the partition with values at location: the
// one metastore call that moves every reader of the partition from one
// directory to another at once (a compaction's switch, docs/design.md
// §12). A missing partition is added there (add_partitions_req with
// ifNotExists, then read again: a partition added meanwhile is altered
// too). Setting the location it has is a no-op call.
func (c *Client) SetPartitionLocation(ctx context.Context, db, table string, values []string, location string) error {
	const op = "set partition location"
	obj := db + "." + table + "/" + strings.Join(values, "/")
	part, err := c.getPartition(ctx, op, db, table, values)
	if errors.Is(err, ErrNotFound) {
		if err := c.AddPartitions(ctx, db, table, []Partition{{Values: values, Location: location}}); err != nil {
			return err
		}
		part, err = c.getPartition(ctx, op, db, table, values)
	}
	if err != nil {
		return err
	}
	if part.Sd == nil {
		return &Error{Op: op, Object: obj, Kind: ErrServer, Message: "partition without a storage descriptor"}
	}
	if part.Sd.Location == location {
		return nil
	}
	part.Sd.Location = location
	return c.call(ctx, op, obj, func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		return m.AlterPartition(ctx, db, table, part)
	})
}

func (c *Client) getPartition(ctx context.Context, op, db, table string, values []string) (*hms.Partition, error) {
	var part *hms.Partition
	err := c.call(ctx, op, db+"."+table+"/"+strings.Join(values, "/"), func(ctx context.Context, m *hms.ThriftHiveMetastoreClient) error {
		var err error
		part, err = m.GetPartition(ctx, db, table, values)
		return err
	})
	if err == nil && part == nil {
		return nil, &Error{Op: op, Object: db + "." + table, Kind: ErrServer, Message: "reply without partition"}
	}
	return part, err
}

// PartitionLocation is the location of the partition with values: where
// its readers read.
func (c *Client) PartitionLocation(ctx context.Context, db, table string, values []string) (string, error) {
	part, err := c.getPartition(ctx, "get partition", db, table, values)
	if err != nil {
		return "", err
	}
	if part.Sd == nil {
		return "", &Error{Op: "get partition", Object: db + "." + table, Kind: ErrServer, Message: "partition without a storage descriptor"}
	}
	return part.Sd.Location, nil
}
