// Package pqgo_experiment is a measurement, not part of the sink: nothing
// imports it. It owns a Parquet writer built on
// github.com/parquet-go/parquet-go that writes the same files as
// format/parquet (same column types and logical types, snappy, dictionary
// encoding with the same fallback, one row group per file) for the Avro
// types of the benchmark workloads, so that issue 25's question, "is
// there a Parquet encoder several times cheaper than arrow-go's?", is
// answered by a measurement (docs/benchmarks.md, "parquet-go measured").
//
// Like format/parquet (D11) it decodes binary Avro itself, without
// goavro's native values. Only the types the workloads use are mapped
// (boolean, int, long, float, double, string, bytes, enum, fixed, date,
// uuid, timestamp-millis/-micros as INT96, decimal, ["null", T], records,
// arrays, maps); NewWriter fails on any other. Its tests also hold a
// writer on parquet-go's other path, GenericWriter of a Go struct of
// bench's 1 KB record, which the sink could not use (its schemas are
// known only at run time) but which shows what parquet-go costs when fed
// typed columns.
package pqgo_experiment
