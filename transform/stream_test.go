package transform

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/benchdata"
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// spansPath is w applied through schema.FieldSpans (every field's span
// kept first, then the ops one by one), the path of plans that reorder
// fields: the reference for stream's pieces.
func spansPath(w *rewrite) *rewrite {
	c := *w
	c.inOrder, c.pieces = false, nil
	return &c
}

// plansOf is the chain's compiled plans for s, in order (one fused step or
// one rewriter).
func plansOf(t *testing.T, c *Chain, s *schema.Schema) []*rewrite {
	t.Helper()
	if len(c.steps) != 1 {
		t.Fatalf("want a chain of one step, got %d", len(c.steps))
	}
	switch st := c.steps[0].t.(type) {
	case *fused:
		ws, err := st.plans.get(s)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	case *valueRewriter:
		w, err := st.plans.get(s)
		if err != nil {
			t.Fatal(err)
		}
		return []*rewrite{w}
	}
	t.Fatalf("step %T is not a rewrite", c.steps[0].t)
	return nil
}

// TestStreamEqualsSpans: stream runs an in-order plan as pieces (runs of
// copied fields joined, dropped fields scanned between); the path through
// all fields' spans must give the same datum, or also fail, for every
// plan of these chains on the bench workloads' records and the types
// record, intact and corrupted at random.
func TestStreamEqualsSpans(t *testing.T) {
	ins := configs.TransformSpec{Alias: "ins", Class: "InsertField$Value", Props: propsOf("offset.field", "off", "static.field", "st", "static.value", "v")}
	chains := func(drop, keep, mask, cast string) [][]configs.TransformSpec {
		return [][]configs.TransformSpec{
			{{Alias: "drop", Class: "ReplaceField$Value", Props: propsOf("exclude", drop)}},
			{{Alias: "keep", Class: "ReplaceField$Value", Props: propsOf("include", keep)}},
			{{Alias: "mask", Class: "MaskField$Value", Props: propsOf("fields", mask)}, ins},
			{{Alias: "cast", Class: "Cast$Value", Props: propsOf("spec", cast)}, {Alias: "drop", Class: "ReplaceField$Value", Props: propsOf("exclude", drop)}},
		}
	}
	types := mustSchema(t, typesSchema)
	cases := []struct {
		s      *schema.Schema
		datums [][]byte
		chains [][]configs.TransformSpec
	}{
		{types, [][]byte{encode(t, types, typesValue)}, chains("b,s", "i,d,n", "s,l", "i:string,f:int64")},
	}
	for _, size := range []string{"100B", "1KB"} {
		pool, text, err := benchdata.Pool(size)
		if err != nil {
			t.Fatal(err)
		}
		cs := chains("ts,qty,note", "id,price,trader", "sym,venue", "id:string,qty:int64")
		if size == "1KB" {
			cs = chains("ts,day,user,ua,attrs", "id,amount,tags,payload", "user,session", "id:string,count:string")
		}
		cases = append(cases, struct {
			s      *schema.Schema
			datums [][]byte
			chains [][]configs.TransformSpec
		}{mustSchema(t, text), pool[:300], append(cs, benchdata.Transforms())})
	}
	rng := rand.New(rand.NewPCG(23, 31))
	compared, failed := 0, 0
	for _, tc := range cases {
		for ci, specs := range tc.chains {
			chain, err := New(specs, nil)
			if err != nil {
				t.Fatal(err)
			}
			plans := plansOf(t, chain, tc.s)
			if len(plans) != 1 || !plans[0].inOrder {
				t.Fatalf("chain %d: %d plans (want one, composed, in order: this test is of stream)", ci, len(plans))
			}
			w := plans[0]
			for i := range 400 {
				in := Value{Schema: tc.s, Bytes: corrupt(rng, tc.datums[i%len(tc.datums)], i)}
				got, errGot := w.apply(in, &Record{Topic: "t", Offset: int64(i)})
				want, errWant := spansPath(w).apply(in, &Record{Topic: "t", Offset: int64(i)})
				switch {
				case (errGot == nil) != (errWant == nil):
					t.Fatalf("schema %s, chain %d, input %x: stream err = %v; spans err = %v", tc.s.Text[:40], ci, in.Bytes, errGot, errWant)
				case errGot != nil:
					failed++
				case !bytes.Equal(got.Bytes, want.Bytes) || got.Schema != want.Schema:
					t.Fatalf("schema %s, chain %d, input %x: stream %x; spans %x", tc.s.Text[:40], ci, in.Bytes, got.Bytes, want.Bytes)
				}
				compared++
			}
		}
	}
	if failed < compared/10 || failed > compared*9/10 {
		t.Errorf("%d of %d inputs failed: the corruptions no longer test both outcomes", failed, compared)
	}
}

// corrupt returns datum intact, truncated, extended or with one byte
// changed, by turns.
func corrupt(rng *rand.Rand, datum []byte, i int) []byte {
	b := append([]byte(nil), datum...)
	switch i % 4 {
	case 1:
		return b[:rng.IntN(len(b))]
	case 2:
		return append(b, byte(rng.IntN(256)))
	case 3:
		b[rng.IntN(len(b))] = byte(rng.IntN(256))
	}
	return b
}

// TestPiecesJoinCopiedRuns: a plan copying fields 0-2, dropping 3,
// converting 4, copying 5-6 and adding one becomes five pieces.
func TestPiecesJoinCopiedRuns(t *testing.T) {
	conv := func(dst, span []byte, _ *Record) ([]byte, error) { return append(dst, span...), nil }
	w := (&rewrite{ops: []fieldOp{{from: 0}, {from: 1}, {from: 2}, {from: 4, conv: conv}, {from: 5}, {from: 6}, {from: -1, conv: conv}}}).prepare()
	var got []string
	for _, p := range w.pieces {
		got = append(got, fmt.Sprintf("%d:%d:%s", p.keepFrom, p.end, map[bool]string{true: "copy", false: "conv"}[p.conv == nil]))
	}
	equal(t, "pieces", strings.Join(got, " "), "0:3:copy 4:5:conv 5:7:copy 7:7:conv")
	if (&rewrite{ops: []fieldOp{{from: 1}, {from: 0}}}).prepare().inOrder {
		t.Error("a plan that reorders fields is in order")
	}
}

// TestStreamChecksNestingAsValidate: a rewrite that streams takes a datum
// Validate takes and refuses one it refuses, at the nesting limit too
// (the fields are one level into the record), since the sink leaves the
// datum's check to the chain's scan. Nested arrays add one level each.
func TestStreamChecksNestingAsValidate(t *testing.T) {
	accepted, refused := 0, 0
	for _, depth := range []int{999, 1000} { // Validate takes 999 levels under the record, refuses 1000
		s := mustSchema(t, `{"type":"record","name":"r","fields":[{"name":"a","type":`+
			strings.Repeat(`{"type":"array","items":`, depth)+`"int"`+strings.Repeat("}", depth)+`}]}`)
		datum := bytes.Repeat([]byte{2}, depth)                             // one item per array
		datum = append(append(datum, 0), bytes.Repeat([]byte{0}, depth)...) // the int, then each array's end
		wantErr := s.Validate(datum)
		_, err := chainOf(t, "InsertField$Value", "topic.field", "t").Apply(&Record{Topic: "t", Value: Value{Schema: s, Bytes: datum}})
		if (err == nil) != (wantErr == nil) || (err != nil && !errors.Is(err, schema.ErrCorruptDatum)) {
			t.Fatalf("%d nested arrays: chain err = %v; Validate err = %v", depth, err, wantErr)
		}
		if err == nil {
			accepted++
		} else {
			refused++
		}
	}
	if accepted == 0 || refused == 0 {
		t.Fatalf("%d accepted, %d refused: the depths no longer straddle the limit", accepted, refused)
	}
}

// TestPlanCacheAlternatingSchemas: the plan cache answers from the entry
// found last when the schema is the same; records of two schemas, from
// goroutines at once (as partitions share a chain), each get their own
// schema's plan.
func TestPlanCacheAlternatingSchemas(t *testing.T) {
	c := chainOf(t, "InsertField$Value", "topic.field", "t")
	var schemas []*schema.Schema
	var datums [][]byte
	for _, size := range []string{"100B", "1KB"} {
		pool, text, err := benchdata.Pool(size)
		if err != nil {
			t.Fatal(err)
		}
		schemas, datums = append(schemas, mustSchema(t, text)), append(datums, pool[0])
	}
	outs := make([]string, len(schemas)) // from a chain of its own per schema
	for i, s := range schemas {
		out, err := chainOf(t, "InsertField$Value", "topic.field", "t").ValueSchema("t", s)
		if err != nil {
			t.Fatal(err)
		}
		outs[i] = out.Text
	}
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			for i := range 2000 {
				k := (i + g) % 2
				r := &Record{Topic: "t", Value: Value{Schema: schemas[k], Bytes: datums[k]}}
				if _, err := c.Apply(r); err != nil {
					errs <- err
					return
				}
				if r.Value.Schema.Text != outs[k] || r.Value.Schema.Validate(r.Value.Bytes) != nil {
					errs <- fmt.Errorf("a record of schema %d got the output schema of the other", k)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
