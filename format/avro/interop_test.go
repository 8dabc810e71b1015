package avro

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestJavaReaderInterop reads our files with the Java reference Avro
// library (what Hive and Spark use) and checks that every record decodes
// and re-encodes to the exact datum we wrote. Opt in with
// HDFS_SINK_AVRO_CLASSPATH=<avro jar and its dependencies> (jackson,
// slf4j, snappy-java); java must be on PATH.
func TestJavaReaderInterop(t *testing.T) {
	cp := os.Getenv("HDFS_SINK_AVRO_CLASSPATH")
	if cp == "" {
		t.Skip("set HDFS_SINK_AVRO_CLASSPATH to run against the Java Avro reader")
	}
	s := mustSchema(t, testSchema)
	datums := testDatums(t, s, 300, 200)
	dir := t.TempDir()
	var files []javaFile
	for _, codec := range []string{"null", "deflate", "snappy"} {
		for _, n := range []int{0, len(datums)} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, s, Options{Codec: codec, BlockBytes: 4096})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range datums[:n] {
				if err := w.WriteDatum(d); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			f := javaFile{filepath.Join(dir, fmt.Sprintf("%s-%d.avro", codec, n)), codec, datums[:n]}
			if err := os.WriteFile(f.path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
	}
	args := []string{"-cp", cp, filepath.Join("testdata", "ReadOCF.java")}
	for _, f := range files {
		args = append(args, f.path)
	}
	out, err := exec.Command("java", args...).Output()
	if err != nil {
		t.Fatalf("java: %v", err)
	}
	checkJavaOutput(t, out, files)
}

type javaFile struct {
	path, codec string
	datums      [][]byte
}

// checkJavaOutput compares ReadOCF's output with what each file holds.
func checkJavaOutput(t *testing.T, out []byte, files []javaFile) {
	t.Helper()
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for _, f := range files {
		path, codec, datums := f.path, f.codec, f.datums
		if !sc.Scan() || sc.Text() != fmt.Sprintf("file %s %s", path, codec) {
			t.Fatalf("want header for %s (%s), got %q", path, codec, sc.Text())
		}
		for j, d := range datums {
			if !sc.Scan() || sc.Text() != hex.EncodeToString(d) {
				t.Fatalf("%s record %d: java re-encoded %q, want %x", path, j, sc.Text(), d)
			}
		}
		if !sc.Scan() || sc.Text() != fmt.Sprintf("end %d", len(datums)) {
			t.Fatalf("%s: want end %d, got %q", path, len(datums), sc.Text())
		}
	}
}
