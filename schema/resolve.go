package schema

import (
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// conv turns a goavro native value (raw form, no logical types) of the
// writer schema into the native value of the reader schema.
type conv func(any) (any, error)

// compiler builds convs. memo breaks the cycles of recursive records.
type compiler struct {
	memo map[[2]*avsc.Node]*conv
}

func incompat(path, format string, args ...any) *IncompatibleError {
	return &IncompatibleError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

// compile returns the conv reading w as r, nil when values need no change.
func (c *compiler) compile(w, r *avsc.Node, path string) (conv, error) {
	if w.Kind == avsc.Union || r.Kind == avsc.Union {
		return c.union(w, r, path)
	}
	if err := checkLogical(w, r, path); err != nil {
		return nil, err
	}
	if w.Kind != r.Kind {
		if fn := promotion(w.Kind, r.Kind); fn != nil {
			return fn, nil
		}
		return nil, incompat(path, "writer type %s cannot be read as %s", w.Kind, r.Kind)
	}
	switch w.Kind {
	case avsc.Record:
		return c.record(w, r, path)
	case avsc.Enum:
		return enumConv(w, r, path)
	case avsc.Fixed:
		return nil, fixedCheck(w, r, path)
	case avsc.Array:
		return c.array(w, r, path)
	case avsc.Map:
		return c.mapOf(w, r, path)
	}
	return nil, nil // same primitive
}

// namesMatch is the spec's rule for named types: same unqualified name, or
// the writer's name is an alias of the reader's type.
func namesMatch(w, r *avsc.Node) bool {
	ws := short(w.Name)
	return ws == short(r.Name) || hasAlias(r.Aliases, ws)
}

// hasAlias reports whether name is the unqualified part of an alias.
func hasAlias(aliases []string, name string) bool {
	return slices.ContainsFunc(aliases, func(a string) bool { return short(a) == name })
}

// checkLogical keeps logical values meaningful: the spec resolves on the
// underlying types only, but a long read as a timestamp, or a decimal read
// with another scale, would change the value the output column shows.
func checkLogical(w, r *avsc.Node, path string) error {
	wd, rd := w.Declared, r.Declared
	wl, rl := wd.LogicalType, rd.LogicalType
	if (wl == "uuid" && rl == "") || (wl == "" && rl == "uuid") {
		return nil // a uuid is a string either way
	}
	if wl != rl {
		return incompat(path, "logical type %s cannot be read as %s", logicalName(wl), logicalName(rl))
	}
	if wl == "decimal" && (wd.Scale != rd.Scale || rd.Precision < wd.Precision) {
		return incompat(path, "decimal(%d,%d) cannot be read as decimal(%d,%d)",
			wd.Precision, wd.Scale, rd.Precision, rd.Scale)
	}
	return nil
}

func logicalName(l string) string {
	if l == "" {
		return "none"
	}
	return l
}

// promotion returns the spec's promotion of a w value to an r value, nil
// if there is none.
func promotion(w, r avsc.Kind) conv { return promotions[[2]avsc.Kind{w, r}] }

// promotions are the Avro specification's: int to long, float or double;
// long to float or double; float to double; string and bytes both ways.
var promotions = map[[2]avsc.Kind]conv{
	{avsc.Int, avsc.Long}: widen[int32, int64], {avsc.Int, avsc.Float}: widen[int32, float32],
	{avsc.Int, avsc.Double}: widen[int32, float64],
	{avsc.Long, avsc.Float}: widen[int64, float32], {avsc.Long, avsc.Double}: widen[int64, float64],
	{avsc.Float, avsc.Double}: widen[float32, float64],
	{avsc.String, avsc.Bytes}: func(v any) (any, error) { return []byte(v.(string)), nil },
	{avsc.Bytes, avsc.String}: func(v any) (any, error) { return string(v.([]byte)), nil },
}

// widen converts a goavro native number to a wider type.
func widen[From, To int32 | int64 | float32 | float64](v any) (any, error) { return To(v.(From)), nil }

func fixedCheck(w, r *avsc.Node, path string) error {
	if !namesMatch(w, r) {
		return incompat(path, "fixed %s cannot be read as fixed %s: names differ", w.Name, r.Name)
	}
	if w.Size != r.Size {
		return incompat(path, "fixed %s has size %d, reader expects %d", w.Name, w.Size, r.Size)
	}
	return nil
}

func (c *compiler) array(w, r *avsc.Node, path string) (conv, error) {
	item, err := c.compile(w.Items, r.Items, path+"[]")
	if item == nil || err != nil {
		return nil, err
	}
	return func(v any) (any, error) { return eachItem(v.([]any), item) }, nil
}

func (c *compiler) mapOf(w, r *avsc.Node, path string) (conv, error) {
	val, err := c.compile(w.Values, r.Values, path+"{}")
	if val == nil || err != nil {
		return nil, err
	}
	return func(v any) (any, error) { return eachValue(v.(map[string]any), val) }, nil
}

// eachItem is the array of f applied to every item of in; the first error
// wins, and the array is then incomplete (callers use one or the other).
// Projection and defaults both convert arrays this way.
func eachItem(in []any, f func(any) (any, error)) ([]any, error) {
	out := make([]any, len(in))
	return out, convertAll(slices.All(in), func(i int, y any) { out[i] = y }, f)
}

// eachValue is eachItem for map values.
func eachValue(in map[string]any, f func(any) (any, error)) (map[string]any, error) {
	out := make(map[string]any, len(in))
	return out, convertAll(maps.All(in), func(k string, y any) { out[k] = y }, f)
}

// convertAll puts f of every value seq yields under its key.
func convertAll[K any](seq iter.Seq2[K, any], put func(K, any), f func(any) (any, error)) error {
	for k, x := range seq {
		y, err := f(x)
		if err != nil {
			return err
		}
		put(k, y)
	}
	return nil
}

// enumConv maps writer symbols the reader lacks to the reader's default;
// without a default, such a symbol fails the datum that carries it.
func enumConv(w, r *avsc.Node, path string) (conv, error) {
	if !namesMatch(w, r) {
		return nil, incompat(path, "enum %s cannot be read as enum %s: names differ", w.Name, r.Name)
	}
	renamed := map[string]string{}
	missing := map[string]error{}
	for _, s := range w.Symbols {
		switch {
		case slices.Contains(r.Symbols, s):
		case r.EnumDefault != nil:
			renamed[s] = *r.EnumDefault
		default:
			missing[s] = incompat(path, "enum symbol %q is not in reader enum %s, which has no default", s, r.Name)
		}
	}
	if len(renamed)+len(missing) == 0 {
		return nil, nil
	}
	if len(missing) == len(w.Symbols) {
		return nil, incompat(path, "no symbol of enum %s is in reader enum %s", w.Name, r.Name)
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

func (c *compiler) record(w, r *avsc.Node, path string) (conv, error) {
	if !namesMatch(w, r) {
		return nil, incompat(path, "record %s cannot be read as record %s: names differ", w.Name, r.Name)
	}
	key := [2]*avsc.Node{w, r}
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

func (c *compiler) planFields(w, r *avsc.Node, path string) ([]fieldPlan, bool, error) {
	plans := make([]fieldPlan, 0, len(r.Fields))
	identity := true
	for i := range r.Fields {
		rf := &r.Fields[i]
		fpath := path + "." + rf.Name
		if wf := writerField(w, rf); wf != nil {
			fc, err := c.compile(wf.Type, rf.Type, fpath)
			if err != nil {
				return nil, false, err
			}
			identity = identity && fc == nil && wf.Name == rf.Name
			plans = append(plans, fieldPlan{name: rf.Name, from: wf.Name, conv: fc})
			continue
		}
		if !rf.HasDefault {
			return nil, false, incompat(fpath, "field is missing from the writer schema and has no default in the reader schema")
		}
		def, err := defaultValue(rf.Type, rf.Default)
		if err != nil {
			return nil, false, incompat(fpath, "invalid default %v: %v", rf.Default, err)
		}
		identity = false
		plans = append(plans, fieldPlan{name: rf.Name, def: def, hasDef: true})
	}
	return plans, identity, nil
}

// writerField finds the writer field feeding rf: same name, else one of
// rf's aliases.
func writerField(w *avsc.Node, rf *avsc.Field) *avsc.Field {
	for i := range w.Fields {
		if w.Fields[i].Name == rf.Name {
			return &w.Fields[i]
		}
	}
	for i := range w.Fields {
		if hasAlias(rf.Aliases, w.Fields[i].Name) {
			return &w.Fields[i]
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
func (c *compiler) union(w, r *avsc.Node, path string) (conv, error) {
	wbranches := []*avsc.Node{w}
	if w.Kind == avsc.Union {
		wbranches = w.Branches
	}
	table := make(map[string]unionBranch, len(wbranches))
	var firstErr error
	identity := w.Kind == avsc.Union && r.Kind == avsc.Union
	for _, wb := range wbranches {
		b := c.branch(wb, r, path)
		if b.err != nil && firstErr == nil {
			firstErr = b.err
		}
		identity = identity && b.err == nil && b.conv == nil && b.key == rawKey(wb)
		table[rawKey(wb)] = b
	}
	if firstErr != nil && countOK(table) == 0 {
		return nil, firstErr
	}
	if identity {
		return nil, nil
	}
	if w.Kind != avsc.Union {
		return table[rawKey(w)].apply, nil
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

func (c *compiler) branch(wb, r *avsc.Node, path string) unionBranch {
	if r.Kind != avsc.Union {
		fn, err := c.compile(wb, r, path)
		return unionBranch{conv: fn, err: err}
	}
	target := selectBranch(wb, r.Branches)
	if target == nil {
		return unionBranch{err: incompat(path, "writer type %s matches no branch of the reader union", rawKey(wb))}
	}
	fn, err := c.compile(wb, target, path)
	return unionBranch{key: rawKey(target), conv: fn, err: err}
}

func selectBranch(w *avsc.Node, branches []*avsc.Node) *avsc.Node {
	for _, b := range branches {
		if b.Kind == w.Kind && (b.Name == "" || namesMatch(w, b)) {
			return b
		}
	}
	for _, b := range branches {
		if promotion(w.Kind, b.Kind) != nil {
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
