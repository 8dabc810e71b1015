package demo

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

func TestRunEndToEnd(t *testing.T) {
	var out bytes.Buffer
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := Run(context.Background(), 3000, 3, t.TempDir(), &out, log); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "exactly-once check: OK — 3000 records") {
		t.Fatalf("demo output lacks the check:\n%s", out.String())
	}
}
