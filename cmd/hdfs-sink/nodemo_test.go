//go:build !demo

package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestProductionBuildHasNoDemo: without the demo tag, `demo` says how to
// run it instead of starting an embedded Kafka.
func TestProductionBuildHasNoDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"demo"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "make demo") {
		t.Fatalf("exit %d, stderr %q", code, errOut.String())
	}
}

// TestProductionUsageOffersNoDemo: the usage of a production build does
// not list a command it does not have.
func TestProductionUsageOffersNoDemo(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := dispatch([]string{"-h"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "hdfs-sink run") {
		t.Fatalf("exit %d, usage:\n%s", code, out.String())
	}
	if strings.Contains(out.String(), "demo") {
		t.Fatalf("the usage of a build without the demo lists it:\n%s", out.String())
	}
}
