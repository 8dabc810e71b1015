package hive

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	hms "github.com/beltran/gohive/hive_metastore"
)

// Format is a table's storage format.
type Format int

const (
	// FormatUnknown is the zero value: CreateTable rejects it, GetTable
	// returns it for tables with another SerDe.
	FormatUnknown Format = iota
	FormatAvro
	FormatParquet
)

var formatNames = [...]string{FormatAvro: "avro", FormatParquet: "parquet"}

func (f Format) String() string {
	if f > FormatUnknown && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// Storage classes per format, as Hive's own DDL writes them.
const (
	avroSerDe      = "org.apache.hadoop.hive.serde2.avro.AvroSerDe"
	avroInput      = "org.apache.hadoop.hive.ql.io.avro.AvroContainerInputFormat"
	avroOutput     = "org.apache.hadoop.hive.ql.io.avro.AvroContainerOutputFormat"
	parquetSerDe   = "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe"
	parquetInput   = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat"
	parquetOutput  = "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"
	paramExternal  = "EXTERNAL"
	paramComment   = "comment"
	paramAvro      = "avro.schema.literal"
	externalTable  = "EXTERNAL_TABLE"
	envCascade     = "CASCADE" // StatsSetupConst.CASCADE
	maxCommentLen  = 256       // COLUMNS_V2.COMMENT is varchar(256) on MySQL
	partitionType  = "string"
	serdeFormatKey = "serialization.format"
)

// Table is the part of a Hive table definition the sink manages.
type Table struct {
	Database, Name string
	Location       string // table root, e.g. hdfs://nn:8020/topics/t
	Format         Format
	// AvroSchema is the writer schema (JSON). Required for FormatAvro,
	// where it becomes avro.schema.literal; for both formats it supplies
	// the columns when Columns is empty.
	AvroSchema string
	// Columns are the data columns. Columns named like a partition key are
	// dropped, as a Hive column cannot be both.
	Columns []Column
	// PartitionKeys are the partition columns; an empty Type means string.
	PartitionKeys []Column
	Comment       string
}

// Column is a Hive column.
type Column struct {
	Name, Type, Comment string
}

// Partition is one partition to register: its values in partition-key
// order and its directory (empty lets the metastore derive it).
type Partition struct {
	Values   []string
	Location string
}

func (t Table) object() string { return t.Database + "." + t.Name }

// dataColumns resolves Columns (explicit or derived from AvroSchema) minus
// the partition keys.
func (t Table) dataColumns() ([]Column, error) {
	cols := t.Columns
	if len(cols) == 0 && t.AvroSchema != "" {
		var err error
		if cols, err = HiveColumns(t.AvroSchema); err != nil {
			return nil, err
		}
	}
	keys := make(map[string]bool, len(t.PartitionKeys))
	for _, k := range t.PartitionKeys {
		keys[strings.ToLower(k.Name)] = true
	}
	out := make([]Column, 0, len(cols))
	for _, c := range cols {
		if !keys[strings.ToLower(c.Name)] {
			out = append(out, c)
		}
	}
	return out, nil
}

// avroLiteral is AvroSchema without top-level fields named like a partition
// key. Hive's AvroSerDe takes its columns from the literal, so a field that
// is also a partition column would make the column ambiguous (Spark refuses
// the table). Reading files written with the full schema through the
// reduced one is plain Avro schema resolution: the field is skipped.
func (t Table) avroLiteral() string {
	if len(t.PartitionKeys) == 0 {
		return t.AvroSchema
	}
	dec := json.NewDecoder(strings.NewReader(t.AvroSchema))
	dec.UseNumber()
	var rec map[string]any
	if err := dec.Decode(&rec); err != nil {
		return t.AvroSchema
	}
	fields, ok := rec["fields"].([]any)
	if !ok {
		return t.AvroSchema
	}
	keys := make(map[string]bool, len(t.PartitionKeys))
	for _, k := range t.PartitionKeys {
		keys[strings.ToLower(k.Name)] = true
	}
	kept := fields[:0:0]
	for _, f := range fields {
		m, _ := f.(map[string]any)
		if name, _ := m["name"].(string); !keys[strings.ToLower(sanitize(name))] {
			kept = append(kept, f)
		}
	}
	if len(kept) == len(fields) {
		return t.AvroSchema
	}
	rec["fields"] = kept
	b, err := json.Marshal(rec)
	if err != nil {
		return t.AvroSchema
	}
	return string(b)
}

// validate checks what the metastore would otherwise reject less clearly.
func (t Table) validate() error {
	switch {
	case t.Database == "" || t.Name == "":
		return fmt.Errorf("database and table name are required")
	case t.Format != FormatAvro && t.Format != FormatParquet:
		return fmt.Errorf("unsupported format %v", t.Format)
	case t.Format == FormatAvro && t.AvroSchema == "":
		return fmt.Errorf("avro table needs AvroSchema")
	case len(t.Columns) == 0 && t.AvroSchema == "":
		return fmt.Errorf("table needs Columns or AvroSchema")
	}
	return nil
}

// storage fills the format-dependent parts of sd and params.
func (t Table) storage(sd *hms.StorageDescriptor, params map[string]string) {
	serde := &hms.SerDeInfo{Parameters: map[string]string{serdeFormatKey: "1"}}
	switch t.Format {
	case FormatAvro:
		serde.SerializationLib, sd.InputFormat, sd.OutputFormat = avroSerDe, avroInput, avroOutput
		params[paramAvro] = t.avroLiteral()
	case FormatParquet:
		serde.SerializationLib, sd.InputFormat, sd.OutputFormat = parquetSerDe, parquetInput, parquetOutput
		delete(params, paramAvro)
	}
	sd.SerdeInfo = serde
}

// toThrift builds the EXTERNAL_TABLE the sink creates, without an owner:
// the metastore leaves it unset.
func (t Table) toThrift() (*hms.Table, error) {
	if err := t.validate(); err != nil {
		return nil, &Error{Op: "create table", Object: t.object(), Kind: ErrInvalidTable, Err: err}
	}
	cols, err := t.dataColumns()
	if err != nil {
		return nil, &Error{Op: "create table", Object: t.object(), Kind: ErrInvalidSchema, Err: err}
	}
	tt := hms.NewTable()
	tt.DbName, tt.TableName, tt.TableType = t.Database, t.Name, externalTable
	tt.Parameters = map[string]string{paramExternal: "TRUE"}
	if t.Comment != "" {
		tt.Parameters[paramComment] = t.Comment
	}
	tt.Sd = &hms.StorageDescriptor{Cols: fieldSchemas(cols), Location: t.Location,
		NumBuckets: -1, Parameters: map[string]string{}}
	t.storage(tt.Sd, tt.Parameters)
	tt.PartitionKeys = fieldSchemas(partitionKeys(t.PartitionKeys))
	return tt, nil
}

// partitionKeys defaults key types to string.
func partitionKeys(keys []Column) []Column {
	out := make([]Column, len(keys))
	for i, k := range keys {
		if k.Type == "" {
			k.Type = partitionType
		}
		out[i] = k
	}
	return out
}

func fieldSchemas(cols []Column) []*hms.FieldSchema {
	out := make([]*hms.FieldSchema, len(cols))
	for i, c := range cols {
		out[i] = &hms.FieldSchema{Name: c.Name, Type: c.Type, Comment: truncateRunes(c.Comment, maxCommentLen)}
	}
	return out
}

// truncateRunes cuts s to n characters without splitting a UTF-8 sequence;
// metastore backends store comments in a character-limited column.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j]
		}
		i++
	}
	return s
}

// fromThrift maps a metastore table back.
func fromThrift(tt *hms.Table) *Table {
	t := &Table{Database: tt.DbName, Name: tt.TableName, Comment: tt.Parameters[paramComment]}
	t.AvroSchema = tt.Parameters[paramAvro]
	if sd := tt.Sd; sd != nil {
		t.Location = sd.Location
		t.Columns = columns(sd.Cols)
		if sd.SerdeInfo != nil {
			t.Format = formatOf(sd.SerdeInfo.SerializationLib)
			if t.AvroSchema == "" {
				t.AvroSchema = sd.SerdeInfo.Parameters[paramAvro]
			}
		}
	}
	t.PartitionKeys = columns(tt.PartitionKeys)
	return t
}

func formatOf(serde string) Format {
	switch serde {
	case avroSerDe:
		return FormatAvro
	case parquetSerDe:
		return FormatParquet
	}
	return FormatUnknown
}

func columns(fs []*hms.FieldSchema) []Column {
	out := make([]Column, 0, len(fs))
	for _, f := range fs {
		out = append(out, Column{Name: f.Name, Type: f.Type, Comment: f.Comment})
	}
	return out
}
