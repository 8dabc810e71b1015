//go:build demo

package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestDemoEndToEnd(t *testing.T) {
	var out, errOut bytes.Buffer
	code := cmdDemo(context.Background(), []string{"--records", "3000", "--partitions", "3", "--dir", t.TempDir()}, &out, &errOut)
	if code != 0 {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
	if !strings.Contains(out.String(), "exactly-once check: OK — 3000 records") {
		t.Fatalf("demo output lacks the check:\n%s", out.String())
	}
}

// TestDemoIsInTheUsage: a build with the demo lists it.
func TestDemoIsInTheUsage(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"-h"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "hdfs-sink demo  [--records N]") {
		t.Fatalf("exit %d, usage:\n%s", code, out.String())
	}
}
