package main

import "github.com/hdfs-sink/hdfs-sink/internal/benchdata"

// The workloads' records are internal/benchdata's, shared with the sink's
// in-process benchmarks.
const poolSize = benchdata.PoolSize

// datumPool returns poolSize binary Avro datums (no wire framing) of the
// named size class ("1KB" or "100B") and their schema's text.
func datumPool(size string) ([][]byte, string, error) { return benchdata.Pool(size) }
