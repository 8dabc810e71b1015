// Command itest-ready is testenv.sh's readiness probe: it runs one
// internal/itest check (kafka, kafka-secure, hdfs, hms, registry, registry-tls or oauth) and exits 0 when the
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
		fmt.Fprintln(os.Stderr, "usage: itest-ready [-timeout d] kafka|kafka-secure|hdfs|hms|registry|registry-tls|oauth|krb-hdfs|krb-hms|krb-kafka|ha-hdfs")
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
