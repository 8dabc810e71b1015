// Command itest-ready is testenv.sh's readiness probe: it runs one
// internal/itest check (kafka, hdfs, hms or registry) and exits 0 when the
// service answers, 1 with the reason otherwise.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/hdfs-sink/hdfs-sink/internal/itest"
)

func main() {
	timeout := flag.Duration("timeout", 10*time.Second, "give up after this long")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: itest-ready [-timeout d] kafka|hdfs|hms|registry")
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if err := itest.Check(ctx, flag.Arg(0)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("ok")
}
