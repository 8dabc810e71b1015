package avro

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/format"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

const testSchema = `{"type":"record","name":"Event","namespace":"t","fields":[
	{"name":"id","type":"long"},
	{"name":"name","type":"string"},
	{"name":"payload","type":"bytes"},
	{"name":"score","type":"double"},
	{"name":"tags","type":{"type":"array","items":"string"}},
	{"name":"attrs","type":{"type":"map","values":"int"}},
	{"name":"note","type":["null","string"],"default":null},
	{"name":"kind","type":{"type":"enum","name":"Kind","symbols":["A","B","C"]}}]}`

var testSync = [16]byte{0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

func mustSchema(t testing.TB, text string) *schema.Schema {
	t.Helper()
	s, err := schema.New(1, text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// words makes payloads compress like real text rather than noise.
var words = strings.Fields("alpha beta gamma delta epsilon kafka hdfs hive avro block sync marker 0 1 2 3 4 5 6 7 8 9")

func text(r *rand.Rand, n int) string {
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
	}
	return b.String()[:n]
}

// testDatums returns n datums of testSchema with payloads of about size bytes.
func testDatums(t testing.TB, s *schema.Schema, n, size int) [][]byte {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	out := make([][]byte, n)
	for i := range out {
		var note any
		if i%3 == 0 {
			note = goavro.Union("string", text(r, 10))
		}
		native := map[string]any{
			"id": int64(i) * 7919, "name": text(r, 8), "payload": []byte(text(r, size)),
			"score": r.Float64(), "tags": []any{text(r, 4), text(r, 5)},
			"attrs": map[string]any{"a": int32(i)}, "note": note, // one key: Go map order would make re-encoding nondeterministic
			"kind": []string{"A", "B", "C"}[i%3],
		}
		b, err := s.Codec.BinaryFromNative(nil, native)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = b
	}
	return out
}

func writeAll(t *testing.T, s *schema.Schema, opts Options, datums [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, s, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range datums {
		if err := w.WriteDatum(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readAll reads file with goavro's OCF reader and checks its metadata.
func readAll(t *testing.T, file []byte, s *schema.Schema, codec string) []any {
	t.Helper()
	r, err := goavro.NewOCFReader(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(r.MetaData()["avro.schema"]); got != s.Text {
		t.Fatalf("avro.schema = %q, want the registry text", got)
	}
	if got := r.CompressionName(); got != codec {
		t.Fatalf("avro.codec = %q, want %q", got, codec)
	}
	var recs []any
	for r.Scan() {
		v, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, v)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

// expectedBlocks simulates the emission rule: a block ends when it reaches
// blockBytes or blockRecords, and the rest goes out at Close.
func expectedBlocks(datums [][]byte, blockBytes, blockRecords int) int {
	blocks, size, count := 0, 0, 0
	for _, d := range datums {
		size += len(d)
		count++
		if size >= blockBytes || (blockRecords > 0 && count >= blockRecords) {
			blocks, size, count = blocks+1, 0, 0
		}
	}
	if count > 0 {
		blocks++
	}
	return blocks
}

func TestRoundTripWithGoavroReader(t *testing.T) {
	s := mustSchema(t, testSchema)
	datums := testDatums(t, s, 600, 120)
	want := make([]any, len(datums))
	for i, d := range datums {
		v, err := s.Native(d)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = v
	}
	sizing := []Options{{}, {BlockBytes: 1000}, {BlockRecords: 7}, {BlockBytes: 1, BlockRecords: 1}}
	for _, codec := range []string{"null", "deflate", "snappy"} {
		for _, opts := range sizing {
			opts.Codec, opts.SyncMarker = codec, testSync
			t.Run(fmt.Sprintf("%s/bytes=%d/records=%d", codec, opts.BlockBytes, opts.BlockRecords), func(t *testing.T) {
				file := writeAll(t, s, opts, datums)
				got := readAll(t, file, s, codec)
				if len(got) != len(want) {
					t.Fatalf("read %d records, want %d", len(got), len(want))
				}
				for i := range want {
					if !reflect.DeepEqual(got[i], want[i]) {
						t.Fatalf("record %d = %#v, want %#v", i, got[i], want[i])
					}
				}
				blockBytes := opts.BlockBytes
				if blockBytes == 0 {
					blockBytes = DefaultBlockBytes
				}
				// One sync marker ends the header, one ends each block.
				blocks := bytes.Count(file, testSync[:]) - 1
				if wantBlocks := expectedBlocks(datums, blockBytes, opts.BlockRecords); blocks != wantBlocks {
					t.Fatalf("file has %d blocks, want %d", blocks, wantBlocks)
				}
			})
		}
	}
}

func TestDatumLargerThanBlockIsItsOwnBlock(t *testing.T) {
	s := mustSchema(t, `"bytes"`)
	big, _ := s.Codec.BinaryFromNative(nil, bytes.Repeat([]byte("x"), 5000))
	small, _ := s.Codec.BinaryFromNative(nil, []byte("y"))
	file := writeAll(t, s, Options{BlockBytes: 1000, SyncMarker: testSync}, [][]byte{small, big, small})
	if got := readAll(t, file, s, "null"); len(got) != 3 || len(got[1].([]byte)) != 5000 {
		t.Fatalf("records = %d", len(got))
	}
	if blocks := bytes.Count(file, testSync[:]) - 1; blocks != 2 {
		t.Fatalf("blocks = %d, want 2 ([small big] then [small])", blocks)
	}
}

func TestEmptyFileIsValid(t *testing.T) {
	s := mustSchema(t, testSchema)
	for _, codec := range []string{"null", "deflate", "snappy"} {
		file := writeAll(t, s, Options{Codec: codec}, nil)
		if got := readAll(t, file, s, codec); len(got) != 0 {
			t.Fatalf("%s: read %d records from an empty file", codec, len(got))
		}
	}
}

// TestGoldenHeader spells out the header bytes from the specification.
func TestGoldenHeader(t *testing.T) {
	s := mustSchema(t, `"int"`)
	file := writeAll(t, s, Options{Codec: "snappy", SyncMarker: testSync}, nil)
	want := []byte("Obj\x01" +
		"\x04" + // map block of 2 entries (zig-zag 2)
		"\x16avro.schema" + "\x0a\"int\"" + // key length 11, value length 5
		"\x14avro.codec" + "\x0csnappy" + // key length 10, value length 6
		"\x00") // end of map
	want = append(want, testSync[:]...)
	if !bytes.Equal(file, want) {
		t.Fatalf("header\n got %q\nwant %q", file, want)
	}
}

// TestGoldenBlock checks one null-codec block: count, size, datums, sync.
func TestGoldenBlock(t *testing.T) {
	s := mustSchema(t, `"int"`)
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, s, Options{SyncMarker: testSync})
	for _, d := range [][]byte{{0x02}, {0x80, 0x01}, {0x01}} { // 1, 64, -1
		if err := w.WriteDatum(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	header := appendHeader(nil, `"int"`, "null", testSync)
	want := append([]byte{0x06, 0x08, 0x02, 0x80, 0x01, 0x01}, testSync[:]...)
	if got := buf.Bytes()[len(header):]; !bytes.Equal(got, want) {
		t.Fatalf("block = % x, want % x", got, want)
	}
}

func TestAppendLongIsZigZagVarint(t *testing.T) {
	tests := []struct {
		v    int64
		want []byte
	}{
		{0, []byte{0}}, {-1, []byte{1}}, {1, []byte{2}}, {-2, []byte{3}}, {63, []byte{0x7e}},
		{64, []byte{0x80, 0x01}}, {-65, []byte{0x81, 0x01}},
		{1 << 62, []byte{0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01}},
	}
	for _, tt := range tests {
		if got := appendLong(nil, tt.v); !bytes.Equal(got, tt.want) {
			t.Errorf("appendLong(%d) = % x, want % x", tt.v, got, tt.want)
		}
	}
}

func TestFlushPushesCompleteBlocks(t *testing.T) {
	s := mustSchema(t, testSchema)
	datums := testDatums(t, s, 5, 50)
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, s, Options{Codec: "deflate"})
	if buf.Len() != 0 || w.BytesBuffered() == 0 {
		t.Fatalf("constructor wrote %d bytes, buffers %d", buf.Len(), w.BytesBuffered())
	}
	for _, d := range datums[:3] {
		_ = w.WriteDatum(d)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if w.BytesBuffered() != 0 {
		t.Fatalf("BytesBuffered after Flush = %d", w.BytesBuffered())
	}
	if got := readAll(t, bytes.Clone(buf.Bytes()), s, "deflate"); len(got) != 3 {
		t.Fatalf("after Flush a reader sees %d records, want 3", len(got))
	}
	_ = w.WriteDatum(datums[3])
	if w.BytesBuffered() != len(datums[3]) {
		t.Fatalf("BytesBuffered = %d, want %d", w.BytesBuffered(), len(datums[3]))
	}
	_ = w.WriteDatum(datums[4])
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, buf.Bytes(), s, "deflate"); len(got) != 5 {
		t.Fatalf("after Close a reader sees %d records, want 5", len(got))
	}
}

type failingWriter struct {
	okWrites int
	closed   bool
}

var errDisk = errors.New("disk on fire")

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.okWrites == 0 {
		return 0, errDisk
	}
	f.okWrites--
	return len(p), nil
}

func (f *failingWriter) Close() error { f.closed = true; return nil }

func TestWriteErrorsAreSticky(t *testing.T) {
	s := mustSchema(t, `"int"`)
	tests := []struct {
		name     string
		okWrites int // header is write 1, first block write 2
		op       func(w *Writer) error
	}{
		{"header on Flush", 0, func(w *Writer) error { return w.Flush() }},
		{"header on Close", 0, func(w *Writer) error { return w.Close() }},
		{"block on full", 1, func(w *Writer) error { return w.WriteDatum([]byte{2, 2, 2, 2}) }},
		{"block on Close", 1, func(w *Writer) error { _ = w.WriteDatum([]byte{2}); return w.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fw := &failingWriter{okWrites: tt.okWrites}
			w, _ := NewWriter(fw, s, Options{BlockBytes: 4})
			if err := tt.op(w); !errors.Is(err, errDisk) {
				t.Fatalf("first failure = %v, want errDisk", err)
			}
			fw.okWrites = 100 // the store recovered; the file is still broken
			for name, err := range map[string]error{
				"WriteDatum": w.WriteDatum([]byte{2}), "Flush": w.Flush(), "Close": w.Close(),
			} {
				if !errors.Is(err, errDisk) {
					t.Errorf("%s after failure = %v, want errDisk", name, err)
				}
			}
		})
	}
}

func TestCloseLeavesUnderlyingWriterOpen(t *testing.T) {
	s := mustSchema(t, `"int"`)
	fw := &failingWriter{okWrites: 10}
	w, _ := NewWriter(fw, s, Options{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if fw.closed {
		t.Fatal("Close closed the underlying writer")
	}
	if err := w.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := w.WriteDatum([]byte{2}); !errors.Is(err, format.ErrClosed) || err.Error() != "avro: writer closed" {
		t.Fatalf("WriteDatum after Close = %v", err)
	}
	if err := w.Flush(); !errors.Is(err, format.ErrClosed) {
		t.Fatalf("Flush after Close = %v", err)
	}
}

func TestNewWriterRejectsBadOptions(t *testing.T) {
	s := mustSchema(t, `"int"`)
	tests := []struct {
		name  string
		opts  Options
		codec bool // want ErrUnsupportedCodec
	}{
		{"bzip2", Options{Codec: "bzip2"}, true},
		{"zstandard", Options{Codec: "zstandard"}, true},
		{"upper case", Options{Codec: "SNAPPY"}, true},
		{"negative bytes", Options{BlockBytes: -1}, false},
		{"negative records", Options{BlockRecords: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewWriter(io.Discard, s, tt.opts)
			if err == nil || errors.Is(err, ErrUnsupportedCodec) != tt.codec {
				t.Fatalf("NewWriter = %v", err)
			}
		})
	}
	if _, err := NewWriter(io.Discard, nil, Options{}); err == nil {
		t.Fatal("nil schema accepted")
	}
}

func TestSyncMarkerIsRandomPerFile(t *testing.T) {
	s := mustSchema(t, `"int"`)
	a := writeAll(t, s, Options{}, nil)
	b := writeAll(t, s, Options{}, nil)
	syncA, syncB := a[len(a)-16:], b[len(b)-16:]
	if bytes.Equal(syncA, syncB) || bytes.Equal(syncA, make([]byte, 16)) {
		t.Fatalf("sync markers % x and % x: want distinct random values", syncA, syncB)
	}
}
