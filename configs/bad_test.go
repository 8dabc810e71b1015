package configs

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/bad*/*.err from the current output")

// TestBadFixtures parses each testdata/bad/*.json and *.properties (with
// <name>.worker.properties as its worker when there is one) and compares
// the complete error text with the paired .err file (one line per joined
// error).
func TestBadFixtures(t *testing.T) {
	lookupEnv = fixtureEnv
	t.Cleanup(func() { lookupEnv = os.LookupEnv })
	for _, f := range fixtures(t, "testdata/bad") {
		t.Run(fixtureName(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			conns, _, err := ParseFile(filepath.Base(f), data, fixtureWorker(t, f))
			if err == nil {
				t.Fatalf("ParseFile accepted a bad config: %+v", conns)
			}
			if conns != nil {
				t.Errorf("ParseFile returned connectors along with an error")
			}
			compareErr(t, f, err)
		})
	}
}

// TestBadWorkerFixtures loads each testdata/badworker/*.properties as a
// worker and compares its error with the paired .err file.
func TestBadWorkerFixtures(t *testing.T) {
	lookupEnv = fixtureEnv
	t.Cleanup(func() { lookupEnv = os.LookupEnv })
	for _, f := range fixtures(t, "testdata/badworker") {
		t.Run(fixtureName(f), func(t *testing.T) {
			w, _, err := LoadWorker(f)
			if err == nil || w != nil {
				t.Fatalf("LoadWorker accepted a bad worker: %+v, %v", w, err)
			}
			compareErr(t, f, err)
		})
	}
}

// fixtureEnv is the environment the fixtures see: HDFS_SINK_FIXTURE_UNSET
// is never set, HOME always.
func fixtureEnv(k string) (string, bool) {
	if k == "HOME" {
		return "/root", true
	}
	return "", false
}

func fixtures(t *testing.T, dir string) []string {
	var files []string
	for _, pat := range []string{"*.json", "*.properties"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		for _, f := range m {
			if !strings.HasSuffix(f, ".worker.properties") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		t.Fatalf("no fixtures in %s", dir)
	}
	return files
}

func fixtureName(f string) string { return filepath.Base(f) }

// fixtureWorker loads <name>.worker.properties next to f, if present.
func fixtureWorker(t *testing.T, f string) *Worker {
	wf := strings.TrimSuffix(f, filepath.Ext(f)) + ".worker.properties"
	if _, err := os.Stat(wf); err != nil {
		return nil
	}
	w, _, err := LoadWorker(wf)
	if err != nil {
		t.Fatalf("worker %s: %v", wf, err)
	}
	return w
}

func compareErr(t *testing.T, f string, err error) {
	t.Helper()
	errFile := strings.TrimSuffix(f, filepath.Ext(f)) + ".err"
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

func TestSyntaxErrorIsTyped(t *testing.T) {
	_, _, err := Parse("x.json", []byte("{\n  \"a\": 1,\n  \"a\": 2}"))
	var se *SyntaxError
	if !errors.As(err, &se) || se.Source != "x.json" || se.Line != 3 || se.Col != 3 {
		t.Fatalf("want *SyntaxError at x.json:3:3, got %T: %v", err, err)
	}
}

// Secrets must not appear in error text: not the fixtures' literal ones,
// not those config providers resolve (testdata/secrets).
func TestErrorsHideSecrets(t *testing.T) {
	files, _ := filepath.Glob("testdata/bad*/*.err")
	secrets := []string{"secret-without-colon", "user:secret", "changeit", "token-value-fixture",
		"fixture-password-1", "fixture-password-2", "fixture-password-3", "password=\\\"p\\\""}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range secrets {
			if strings.Contains(string(text), secret) {
				t.Errorf("%s leaks %q: %s", f, secret, text)
			}
		}
	}
	// A provider-resolved value of a secret key is hidden ("ten" as user
	// info); of any other key it is quoted like the file's own values are.
	if text, _ := os.ReadFile("testdata/bad/provider-secret-in-error.err"); !strings.Contains(string(text), `"[hidden]"`) || strings.Contains(string(text), "ten") {
		t.Errorf("provider-resolved secret shown: %s", text)
	}
	if text, _ := os.ReadFile("testdata/bad/provider-value-in-error.err"); !strings.Contains(string(text), `"ten"`) {
		t.Errorf("provider-resolved value of a plain key hidden: %s", text)
	}
	if len(files) < 100 {
		t.Fatalf("only %d error fixtures found", len(files))
	}
}
