//go:build demo

package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/hdfs-sink/hdfs-sink/internal/demo"
)

// demoUsage is the demo's line of the usage: only a build with the demo
// has one.
const demoUsage = "  hdfs-sink demo  [--records N] [--partitions N] [--dir DIR]\n"

// cmdDemo runs the whole pipeline in one process (package internal/demo).
func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	records := fs.Int("records", 10000, "records to produce")
	partitions := fs.Int("partitions", 4, "partitions of the demo topic")
	dir := fs.String("dir", "", "where to write (default: a new temp dir)")
	var lf logFlags
	lf.register(fs)
	lf.level = "warn"
	if err := fs.Parse(args); err != nil || *records < 1 || *partitions < 1 {
		return 2
	}
	log, err := lf.logger(stderr)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink demo:", err)
		return 2
	}
	if err := demo.Run(ctx, *records, int32(*partitions), *dir, stdout, log); err != nil {
		fmt.Fprintln(stderr, "hdfs-sink demo: FAILED:", err)
		return 1
	}
	return 0
}
