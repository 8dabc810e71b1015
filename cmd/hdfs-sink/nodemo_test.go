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
