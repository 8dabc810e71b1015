package configs

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad/*.err from the current output")

// TestBadFixtures parses each testdata/bad/*.json and compares the complete
// error text with the paired .err file (one line per joined error).
func TestBadFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/bad/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			c, _, err := Parse(filepath.Base(f), data)
			if err == nil {
				t.Fatalf("Parse accepted a bad config: %+v", c)
			}
			if c != nil {
				t.Errorf("Parse returned a connector along with an error")
			}
			errFile := strings.TrimSuffix(f, ".json") + ".err"
			if *update {
				if err := os.WriteFile(errFile, []byte(err.Error()+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, rerr := os.ReadFile(errFile)
			if rerr != nil {
				t.Fatalf("missing expected error file: %v", rerr)
			}
			if got := err.Error(); got != strings.TrimRight(string(want), "\n") {
				t.Errorf("error text\n got: %s\nwant: %s", got, want)
			}
		})
	}
}

// Every field problem must be a *FieldError that names connector, source
// and key, so the daemon can report it structurally.
func TestBadFieldErrorsAreTyped(t *testing.T) {
	data := []byte(`{"name":"orders","config":{"topics":"orders","flush.size":"ten",
		"hdfs.url":"hdfs://127.0.0.1:8020","bootstrap.servers":"127.0.0.1:9092",
		"value.converter.schema.registry.url":"http://127.0.0.1:8081","avro.codec":"bzip2"}}`)
	_, _, err := Parse("orders.json", data)
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("want *FieldError, got %T: %v", err, err)
	}
	if fe.Connector != "orders" || fe.Source != "orders.json" || fe.Key != "flush.size" || fe.Value != "ten" {
		t.Errorf("first field error = %+v", fe)
	}
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok || len(joined.Unwrap()) != 2 {
		t.Fatalf("want 2 joined errors, got %v", err)
	}
}

func TestFileErrorIsTyped(t *testing.T) {
	_, _, err := Parse("x.json", []byte(`{`))
	var fe *FileError
	if !errors.As(err, &fe) || fe.Source != "x.json" {
		t.Fatalf("want *FileError for x.json, got %T: %v", err, err)
	}
}

// Secrets must not appear in error text.
func TestErrorsHideSecrets(t *testing.T) {
	for _, name := range []string{"registry-url-bad", "user-info-malformed"} {
		want, err := os.ReadFile("testdata/bad/" + name + ".err")
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"secret"} {
			if strings.Contains(string(want), secret) {
				t.Errorf("%s.err leaks %q: %s", name, secret, want)
			}
		}
	}
}
