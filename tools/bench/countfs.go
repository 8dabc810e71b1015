package main

import "github.com/hdfs-sink/hdfs-sink/storage/storagetest"

// callsOf is the store calls a piece of work made, by operation: each
// is one NameNode RPC or more (Create and a file's Close are several), so
// the counts are the NameNode cost of a compaction.
func callsOf(c *storagetest.Counting) map[string]int64 {
	out := map[string]int64{}
	for op, n := range c.Calls() {
		out[op] = int64(n)
	}
	return out
}

// sumCalls is the number of store calls in counts.
func sumCalls(counts map[string]int64) int64 {
	var n int64
	for _, v := range counts {
		n += v
	}
	return n
}
