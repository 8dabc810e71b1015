package transform

import (
	"github.com/hdfs-sink/hdfs-sink/schema"
)

// fused is a run of value rewriters without predicates, applied as one:
// their plans for an input schema are composed into one rewrite, so a
// record is scanned and copied once however many of them there are.
// Rewrites that cannot be composed (HoistField, Flatten: the fields are
// not the input's) are applied one after the other.
type fused struct {
	parts []*valueRewriter
	names []string // the parts' aliases
	plans planCache[[]*rewrite]
	// jsonRun is the parts' schemaless branches, run on one parse of a
	// schemaless JSON value; nil when a part has none.
	jsonRun []jsonEdit
}

func newFused(parts []*valueRewriter, names []string) *fused {
	f := &fused{parts: parts, names: names}
	f.plans.compile = f.compile
	for _, p := range parts {
		if p.json == nil {
			f.jsonRun = nil
			break
		}
		f.jsonRun = append(f.jsonRun, p.json)
	}
	return f
}

// withoutJSON is the alias of the first part without a schemaless
// branch; "": none.
func (f *fused) withoutJSON() string {
	for i, p := range f.parts {
		if p.json == nil {
			return f.names[i]
		}
	}
	return ""
}

// compile is the parts' plans for s, composed where they can be.
func (f *fused) compile(s *schema.Schema) ([]*rewrite, error) {
	var out []*rewrite
	for _, p := range f.parts {
		w, err := p.plans.get(s)
		if err != nil {
			return nil, err
		}
		s = w.out
		if n := len(out); n > 0 {
			if c, ok := compose(out[n-1], w); ok {
				out[n-1] = c
				continue
			}
		}
		out = append(out, w)
	}
	return out, nil
}

// compose is b after a as one rewrite; false when a's output fields are
// not made field by field (HoistField, Flatten, ExtractField).
func compose(a, b *rewrite) (*rewrite, bool) {
	if a.ops == nil || b.ops == nil || a.whole {
		return nil, false
	}
	c := &rewrite{out: b.out, identity: a.identity && b.identity, whole: b.whole, ops: make([]fieldOp, len(b.ops))}
	for i, op := range b.ops {
		if op.from < 0 {
			c.ops[i] = op
			continue
		}
		ao := a.ops[op.from]
		switch {
		case op.conv == nil:
			c.ops[i] = ao
		case ao.conv == nil:
			c.ops[i] = fieldOp{from: ao.from, conv: op.conv}
		default:
			first, then := ao.conv, op.conv
			c.ops[i] = fieldOp{from: ao.from, conv: func(dst, span []byte, r *Record) ([]byte, error) {
				mid, err := first(nil, span, r)
				if err != nil {
					return nil, err
				}
				return then(dst, mid, r)
			}}
		}
	}
	return c.prepare(), true
}

func (f *fused) apply(r *Record) (bool, error) {
	if r.Value.IsNull() {
		return true, nil
	}
	if r.Value.Schema == nil {
		if f.jsonRun == nil {
			return false, errSchemaless
		}
		if err := applyJSON(&r.Value, f.jsonRun, r); err != nil {
			return false, err
		}
		return true, nil
	}
	plans, err := f.plans.get(r.Value.Schema)
	if err != nil {
		return false, err
	}
	for _, w := range plans {
		if r.Value, err = w.apply(r.Value, r); err != nil {
			return false, err
		}
	}
	return true, nil
}

func (f *fused) outSchema(s *schema.Schema) (*schema.Schema, error) {
	plans, err := f.plans.get(s)
	if err != nil {
		return nil, err
	}
	return plans[len(plans)-1].out, nil
}

func (f *fused) onKey() bool { return false }

// fuseSteps replaces each run of two or more value rewriters without
// predicates by one fused step, named by the run's aliases and classes.
func fuseSteps(steps []step) []step {
	var out []step
	for i := 0; i < len(steps); {
		j := i
		var parts []*valueRewriter
		for ; j < len(steps); j++ {
			vr, ok := steps[j].t.(*valueRewriter)
			if !ok || vr.key || steps[j].pred != nil {
				break
			}
			parts = append(parts, vr)
		}
		if len(parts) < 2 {
			out = append(out, steps[i])
			i++
			continue
		}
		var names []string
		for k := i; k < j; k++ {
			names = append(names, steps[k].name)
		}
		st := step{t: newFused(parts, names)}
		for k := i; k < j; k++ {
			st.name, st.class = joinName(st.name, steps[k].name), joinName(st.class, steps[k].class)
		}
		out = append(out, st)
		i = j
	}
	return out
}

func joinName(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}
