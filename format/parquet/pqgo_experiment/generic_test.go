package pqgo_experiment

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"testing"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

// click is bench's 1 KB record (internal/benchdata.Schema1KB) as a Go
// struct for parquet-go's GenericWriter: its other write path, which
// needs a Go type per schema (the sink's schemas are known only at run
// time, so it could use this only through reflect.StructOf).
type click struct {
	ID        int64             `parquet:"id,dict"`
	TS        deprecated.Int96  `parquet:"ts"`
	Day       int32             `parquet:"day,date,dict"`
	RequestID string            `parquet:"request_id,dict"`
	Amount    [6]byte           `parquet:"amount,decimal(2:12),dict"`
	User      string            `parquet:"user,dict"`
	Session   string            `parquet:"session,dict"`
	Country   string            `parquet:"country,dict"`
	Kind      string            `parquet:"kind,dict"`
	Score     float64           `parquet:"score,dict"`
	Ratio     float32           `parquet:"ratio,dict"`
	Count     int32             `parquet:"count,dict"`
	Flag      bool              `parquet:"flag"`
	Referrer  *string           `parquet:"referrer,optional,dict"`
	UA        string            `parquet:"ua,dict"`
	Path      string            `parquet:"path,dict"`
	Tags      []string          `parquet:"tags,list" parquet-element:",dict"`
	Attrs     map[string]string `parquet:"attrs" parquet-key:",dict" parquet-value:",dict"`
	LatencyUS int64             `parquet:"latency_us,dict"`
	Payload   string            `parquet:"payload,dict"`
}

// genericWriter decodes bench 1 KB datums into a batch of clicks (strings
// point into a copy of the batch's datums) and writes them with
// GenericWriter.Write, cutting pages every DefaultPageRows rows.
type genericWriter struct {
	gw    *parquet.GenericWriter[click]
	out   *countingWriter
	batch []click
	n     int
	arena []byte
	paged int
}

func newGenericWriter(w io.Writer, _ *schema.Schema) (fileWriter, error) {
	out := &countingWriter{w: w}
	gw := parquet.NewGenericWriter[click](out,
		// the root named as arrow-go names it, not after the Go type
		parquet.NewSchema("schema", parquet.SchemaOf(click{})),
		parquet.Compression(&parquet.Snappy),
		parquet.PageBufferSize(pageBytes),
		parquet.DictionaryMaxBytes(pageBytes),
		parquet.DataPageVersion(1),
		parquet.CreatedBy(createdBy, "", ""),
	)
	return &genericWriter{gw: gw, out: out, batch: make([]click, batchRows)}, nil
}

func (g *genericWriter) WriteDatum(datum []byte) error {
	mark := len(g.arena)
	g.arena = append(g.arena, datum...)
	if err := decodeClick(&g.batch[g.n], g.arena[mark:]); err != nil {
		g.arena = g.arena[:mark]
		return err
	}
	if g.n++; g.n == batchRows {
		return g.flush()
	}
	return nil
}

func (g *genericWriter) flush() error {
	if _, err := g.gw.Write(g.batch[:g.n]); err != nil {
		return err
	}
	g.paged += g.n
	g.n = 0
	g.arena = g.arena[:0]
	if g.paged >= DefaultPageRows {
		g.paged = 0
		for _, c := range g.gw.ColumnWriters() {
			if err := c.Flush(); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *genericWriter) BytesBuffered() int { return int(g.gw.Size() - g.out.n) }

func (g *genericWriter) Close() error {
	if err := g.flush(); err != nil {
		return err
	}
	return g.gw.Close()
}

// clickReader reads the datum's values in order; the first error sticks.
type clickReader struct {
	b   []byte
	err error
}

func (r *clickReader) long() int64 {
	if r.err != nil {
		return 0
	}
	v, rest, err := readLong(r.b)
	r.b, r.err = rest, err
	return v
}

func (r *clickReader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	v, rest, err := rawBytes(r.b)
	r.b, r.err = rest, err
	return v
}

func (r *clickReader) str() string {
	b := r.bytes()
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func (r *clickReader) fixed(n int) []byte {
	if r.err != nil || len(r.b) < n {
		r.err = errShort
		return make([]byte, n)
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

var kinds = []string{"VIEW", "CLICK", "BUY"}

func decodeClick(c *click, b []byte) error {
	r := &clickReader{b: b}
	c.ID = r.long()
	nanos := r.long() * 1e6
	days, rem := nanos/nanosPerDay, nanos%nanosPerDay
	if rem < 0 {
		days, rem = days-1, rem+nanosPerDay
	}
	c.TS = deprecated.Int96{uint32(rem), uint32(uint64(rem) >> 32), uint32(days + julianUnixEpoch)}
	c.Day = int32(r.long())
	c.RequestID = r.str()
	v, _ := small(r.bytes())
	var be [8]byte
	binary.BigEndian.PutUint64(be[:], uint64(v))
	copy(c.Amount[:], be[2:])
	c.User, c.Session, c.Country = r.str(), r.str(), r.str()
	if k := r.long(); k >= 0 && k < 3 {
		c.Kind = kinds[k]
	} else if r.err == nil {
		r.err = fmt.Errorf("enum index %d", k)
	}
	c.Score = math.Float64frombits(binary.LittleEndian.Uint64(r.fixed(8)))
	c.Ratio = math.Float32frombits(binary.LittleEndian.Uint32(r.fixed(4)))
	c.Count = int32(r.long())
	c.Flag = r.fixed(1)[0] == 1
	c.Referrer = nil
	if r.long() == 1 {
		s := r.str()
		c.Referrer = &s
	}
	c.UA, c.Path = r.str(), r.str()
	c.Tags = c.Tags[:0]
	for n := r.long(); n != 0 && r.err == nil; n = r.long() {
		for range n {
			c.Tags = append(c.Tags, r.str())
		}
	}
	if c.Attrs == nil {
		c.Attrs = map[string]string{}
	}
	clear(c.Attrs)
	for n := r.long(); n != 0 && r.err == nil; n = r.long() {
		for range n {
			k := r.str()
			c.Attrs[k] = r.str()
		}
	}
	c.LatencyUS = r.long()
	c.Payload = r.str()
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%d bytes after the record", len(r.b))
	}
	return r.err
}

// TestStructWriterFile compares GenericWriter's file with arrow-go's as
// TestSameFileAsArrowGo does.
func TestStructWriterFile(t *testing.T) {
	wl := workloads(t)[0]
	datums := make([][]byte, 5000)
	for i := range datums {
		datums[i] = wl.datums[i%len(wl.datums)]
	}
	var buf bytes.Buffer
	w, _ := newGenericWriter(&buf, wl.s)
	for _, d := range datums {
		if err := w.WriteDatum(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := writeArrowGo(t, wl.s, datums)
	if a, b := describe(t, want), describe(t, buf.Bytes()); a != b {
		t.Errorf("file layout differs\narrow-go:\n%s\nparquet-go struct:\n%s", a, b)
	}
	compareValues(t, readTable(t, want), readTable(t, buf.Bytes()))
}
