package schema

import (
	"fmt"
	"slices"
)

// conv turns a goavro native value (raw form, no logical types) of the
// writer schema into the native value of the reader schema.
type conv func(any) (any, error)

// compiler builds convs. memo breaks the cycles of recursive records.
type compiler struct {
	memo map[[2]*node]*conv
}

func incompat(path, format string, args ...any) *IncompatibleError {
	return &IncompatibleError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// compile returns the conv reading w as r, nil when values need no change.
func (c *compiler) compile(w, r *node, path string) (conv, error) {
	if w.kind == kUnion || r.kind == kUnion {
		return c.union(w, r, path)
	}
	if err := checkLogical(w, r, path); err != nil {
		return nil, err
	}
	if w.kind != r.kind {
		if fn := promotion(w.kind, r.kind); fn != nil {
			return fn, nil
		}
		return nil, incompat(path, "writer type %s cannot be read as %s", w.kind, r.kind)
	}
	switch w.kind {
	case kRecord:
		return c.record(w, r, path)
	case kEnum:
		return enumConv(w, r, path)
	case kFixed:
		return nil, fixedCheck(w, r, path)
	case kArray:
		return c.array(w, r, path)
	case kMap:
		return c.mapOf(w, r, path)
	}
	return nil, nil // same primitive
}

// namesMatch is the spec's rule for named types: same unqualified name, or
// the writer's name is an alias of the reader's type.
func namesMatch(w, r *node) bool {
	ws := short(w.name)
	return ws == short(r.name) || slices.Contains(r.aliases, ws)
}

// checkLogical keeps logical values meaningful: the spec resolves on the
// underlying types only, but a long read as a timestamp, or a decimal read
// with another scale, would change the value the output column shows.
func checkLogical(w, r *node, path string) error {
	wl, rl := w.logical, r.logical
	if (wl == "uuid" && rl == "") || (wl == "" && rl == "uuid") {
		return nil // a uuid is a string either way
	}
	if wl != rl {
		return incompat(path, "logical type %s cannot be read as %s", logicalName(wl), logicalName(rl))
	}
	if wl == "decimal" && (w.scale != r.scale || r.precision < w.precision) {
		return incompat(path, "decimal(%d,%d) cannot be read as decimal(%d,%d)",
			w.precision, w.scale, r.precision, r.scale)
	}
	return nil
}

func logicalName(l string) string {
	if l == "" {
		return "none"
	}
	return l
}

// promotion returns the spec's promotions, nil if there is none.
func promotion(w, r kind) conv {
	switch {
	case w == kInt && r == kLong:
		return func(v any) (any, error) { return int64(v.(int32)), nil }
	case w == kInt && r == kFloat:
		return func(v any) (any, error) { return float32(v.(int32)), nil }
	case w == kInt && r == kDouble:
		return func(v any) (any, error) { return float64(v.(int32)), nil }
	case w == kLong && r == kFloat:
		return func(v any) (any, error) { return float32(v.(int64)), nil }
	case w == kLong && r == kDouble:
		return func(v any) (any, error) { return float64(v.(int64)), nil }
	case w == kFloat && r == kDouble:
		return func(v any) (any, error) { return float64(v.(float32)), nil }
	case w == kString && r == kBytes:
		return func(v any) (any, error) { return []byte(v.(string)), nil }
	case w == kBytes && r == kString:
		return func(v any) (any, error) { return string(v.([]byte)), nil }
	}
	return nil
}

func fixedCheck(w, r *node, path string) error {
	if !namesMatch(w, r) {
		return incompat(path, "fixed %s cannot be read as fixed %s: names differ", w.name, r.name)
	}
	if w.size != r.size {
		return incompat(path, "fixed %s has size %d, reader expects %d", w.name, w.size, r.size)
	}
	return nil
}

func (c *compiler) array(w, r *node, path string) (conv, error) {
	item, err := c.compile(w.items, r.items, path+"[]")
	if item == nil || err != nil {
		return nil, err
	}
	return func(v any) (any, error) {
		in := v.([]any)
		out := make([]any, len(in))
		for i, x := range in {
			y, err := item(x)
			if err != nil {
				return nil, err
			}
			out[i] = y
		}
		return out, nil
	}, nil
}

func (c *compiler) mapOf(w, r *node, path string) (conv, error) {
	val, err := c.compile(w.items, r.items, path+"{}")
	if val == nil || err != nil {
		return nil, err
	}
	return func(v any) (any, error) {
		in := v.(map[string]any)
		out := make(map[string]any, len(in))
		for k, x := range in {
			y, err := val(x)
			if err != nil {
				return nil, err
			}
			out[k] = y
		}
		return out, nil
	}, nil
}

// enumConv maps writer symbols the reader lacks to the reader's default;
// without a default, such a symbol fails the datum that carries it.
func enumConv(w, r *node, path string) (conv, error) {
	if !namesMatch(w, r) {
		return nil, incompat(path, "enum %s cannot be read as enum %s: names differ", w.name, r.name)
	}
	renamed := map[string]string{}
	missing := map[string]error{}
	for _, s := range w.symbols {
		switch {
		case slices.Contains(r.symbols, s):
		case r.enumDefault != nil:
			renamed[s] = *r.enumDefault
		default:
			missing[s] = incompat(path, "enum symbol %q is not in reader enum %s, which has no default", s, r.name)
		}
	}
	if len(renamed)+len(missing) == 0 {
		return nil, nil
	}
	if len(missing) == len(w.symbols) {
		return nil, incompat(path, "no symbol of enum %s is in reader enum %s", w.name, r.name)
	}
	return func(v any) (any, error) {
		s := v.(string)
		if err := missing[s]; err != nil {
			return nil, err
		}
		if to, ok := renamed[s]; ok {
			return to, nil
		}
		return s, nil
	}, nil
}

// fieldPlan says where one reader field's value comes from.
type fieldPlan struct {
	name   string // reader field name
	from   string // writer field name; "" means use def
	conv   conv
	def    any
	hasDef bool
}

func (c *compiler) record(w, r *node, path string) (conv, error) {
	if !namesMatch(w, r) {
		return nil, incompat(path, "record %s cannot be read as record %s: names differ", w.name, r.name)
	}
	key := [2]*node{w, r}
	if p, ok := c.memo[key]; ok { // recursive reference: resolve later
		return func(v any) (any, error) { return (*p)(v) }, nil
	}
	self := new(conv)
	c.memo[key] = self
	plans, identity, err := c.planFields(w, r, path)
	if err != nil {
		delete(c.memo, key) // a later reference must fail the same way
		return nil, err
	}
	*self = recordConv(plans)
	if identity {
		// goavro encodes only the reader's fields, by name, so a map that
		// already holds them all can be passed through.
		return nil, nil
	}
	return *self, nil
}

func (c *compiler) planFields(w, r *node, path string) ([]fieldPlan, bool, error) {
	plans := make([]fieldPlan, 0, len(r.fields))
	identity := true
	for _, rf := range r.fields {
		fpath := path + "." + rf.name
		if wf := writerField(w, rf); wf != nil {
			fc, err := c.compile(wf.typ, rf.typ, fpath)
			if err != nil {
				return nil, false, err
			}
			identity = identity && fc == nil && wf.name == rf.name
			plans = append(plans, fieldPlan{name: rf.name, from: wf.name, conv: fc})
			continue
		}
		if !rf.hasDef {
			return nil, false, incompat(fpath, "field is missing from the writer schema and has no default in the reader schema")
		}
		def, err := defaultValue(rf.typ, rf.def)
		if err != nil {
			return nil, false, incompat(fpath, "invalid default %v: %v", rf.def, err)
		}
		identity = false
		plans = append(plans, fieldPlan{name: rf.name, def: def, hasDef: true})
	}
	return plans, identity, nil
}

// writerField finds the writer field feeding rf: same name, else one of
// rf's aliases.
func writerField(w *node, rf *field) *field {
	for _, wf := range w.fields {
		if wf.name == rf.name {
			return wf
		}
	}
	for _, wf := range w.fields {
		if slices.Contains(rf.aliases, wf.name) {
			return wf
		}
	}
	return nil
}

func recordConv(plans []fieldPlan) conv {
	return func(v any) (any, error) {
		in := v.(map[string]any)
		out := make(map[string]any, len(plans))
		for i := range plans {
			p := &plans[i]
			if p.hasDef {
				out[p.name] = p.def
				continue
			}
			x := in[p.from]
			if p.conv != nil {
				var err error
				if x, err = p.conv(x); err != nil {
					return nil, err
				}
			}
			out[p.name] = x
		}
		return out, nil
	}
}

// unionBranch is how one writer branch is read.
type unionBranch struct {
	key  string // reader union key to wrap with; "" no union, "null" nil
	conv conv
	err  error // this branch cannot be read: fails the datum
}

// union resolves a writer union branch by branch, or a writer value into a
// reader union (first exactly matching branch, else first promotable one).
func (c *compiler) union(w, r *node, path string) (conv, error) {
	wbranches := []*node{w}
	if w.kind == kUnion {
		wbranches = w.branches
	}
	table := make(map[string]unionBranch, len(wbranches))
	var firstErr error
	identity := w.kind == kUnion && r.kind == kUnion
	for _, wb := range wbranches {
		b := c.branch(wb, r, path)
		if b.err != nil && firstErr == nil {
			firstErr = b.err
		}
		identity = identity && b.err == nil && b.conv == nil && b.key == wb.unionKey()
		table[wb.unionKey()] = b
	}
	if firstErr != nil && countOK(table) == 0 {
		return nil, firstErr
	}
	if identity {
		return nil, nil
	}
	if w.kind != kUnion {
		return table[w.unionKey()].apply, nil
	}
	return func(v any) (any, error) {
		key, inner := unwrapUnion(v)
		b, ok := table[key]
		if !ok {
			return nil, incompat(path, "writer union value has unknown branch %q", key)
		}
		return b.apply(inner)
	}, nil
}

func countOK(t map[string]unionBranch) int {
	n := 0
	for _, b := range t {
		if b.err == nil {
			n++
		}
	}
	return n
}

func (c *compiler) branch(wb, r *node, path string) unionBranch {
	if r.kind != kUnion {
		fn, err := c.compile(wb, r, path)
		return unionBranch{conv: fn, err: err}
	}
	target := selectBranch(wb, r.branches)
	if target == nil {
		return unionBranch{err: incompat(path, "writer type %s matches no branch of the reader union", wb.unionKey())}
	}
	fn, err := c.compile(wb, target, path)
	return unionBranch{key: target.unionKey(), conv: fn, err: err}
}

func selectBranch(w *node, branches []*node) *node {
	for _, b := range branches {
		if b.kind == w.kind && (b.name == "" || namesMatch(w, b)) {
			return b
		}
	}
	for _, b := range branches {
		if promotion(w.kind, b.kind) != nil {
			return b
		}
	}
	return nil
}

func (b unionBranch) apply(v any) (any, error) {
	if b.err != nil {
		return nil, b.err
	}
	if b.conv != nil {
		var err error
		if v, err = b.conv(v); err != nil {
			return nil, err
		}
	}
	switch b.key {
	case "":
		return v, nil
	case "null":
		return nil, nil
	}
	return map[string]any{b.key: v}, nil
}

// unwrapUnion splits goavro's union form: nil, or a one-entry map keyed by
// the branch's type name.
func unwrapUnion(v any) (string, any) {
	if v == nil {
		return "null", nil
	}
	for k, x := range v.(map[string]any) {
		return k, x
	}
	return "", nil
}
