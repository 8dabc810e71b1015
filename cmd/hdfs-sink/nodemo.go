//go:build !demo

package main

import (
	"context"
	"fmt"
	"io"
)

// demoUsage is empty: a production build's usage does not offer the demo.
const demoUsage = ""

// cmdDemo in a production build: the demo's in-process Kafka is left out.
func cmdDemo(_ context.Context, _ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "hdfs-sink demo: this binary is built without the demo, whose embedded Kafka stays out of production builds; run `make demo` (go run -tags demo ./cmd/hdfs-sink demo)")
	return 2
}
