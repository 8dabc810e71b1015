package verify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/layout"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// readJSONLines counts a JSON format file's lines (one value each) and,
// with seqField, reads that field of each line's object, as readAvro does
// for Avro files.
func readJSONLines(ctx context.Context, fsys storage.FS, p string, r layout.FileRange, seqField string) (File, error) {
	f := File{Path: p, Range: r}
	rc, err := fsys.Open(ctx, p)
	if err != nil {
		return f, err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if seqField != "" {
			seq, err := jsonSeq(sc.Bytes(), seqField)
			if err == nil {
				err = f.addSeq(seq)
			}
			if err != nil {
				return f, fmt.Errorf("%s: line %d: %w", p, f.Records+1, err)
			}
		}
		f.Records++
	}
	if err := sc.Err(); err != nil {
		return f, fmt.Errorf("%s: %w", p, err)
	}
	return f, nil
}

// jsonSeq is the integer field of a line's JSON object.
func jsonSeq(line []byte, field string) (int64, error) {
	d := json.NewDecoder(bytes.NewReader(line))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		return 0, fmt.Errorf("not a JSON object: %w", err)
	}
	n, ok := m[field].(json.Number)
	if !ok {
		return 0, fmt.Errorf("field %q is %T, want a number", field, m[field])
	}
	return n.Int64()
}
