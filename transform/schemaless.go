package transform

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// jsonEdit is a transform's schemaless branch (Connect's applySchemaless)
// on a JSON value (jsontext.go). A transform without one refuses
// schemaless values (errSchemaless), and check names it (NeedsSchemas).
type jsonEdit interface {
	editJSON(v *jsonValue, r *Record) error
}

// applyJSON runs edits on the schemaless JSON value *val of r: the value
// is parsed at most once for the run and written once, into r's buffer.
// A value the edits made JSON null becomes null (a tombstone downstream).
func applyJSON(val *Value, edits []jsonEdit, r *Record) error {
	jv := jsonValuePool.Get().(*jsonValue)
	defer jv.release()
	jv.reset(val.Bytes)
	for _, e := range edits {
		if err := e.editJSON(jv, r); err != nil {
			return err
		}
	}
	out, ok := jv.appendTo(r.buffer(len(val.Bytes) + 64))
	if !ok {
		*val = Value{}
		return nil
	}
	r.keep(out)
	*val = Value{Bytes: out}
	return nil
}

// InsertField (InsertField.applySchemaless): the topic, partition, offset
// and timestamp (epoch milliseconds: Connect puts record.timestamp(), a
// Long, which the reference's JSON format writes as a number), and the
// static value when static.value is set. The optional/required suffix
// only shapes a schema, so it does nothing here. A name the object has
// already is replaced in place; a new one goes at the end.
func (t *insertField) editJSON(v *jsonValue, r *Record) error {
	if err := v.object("field insertion"); err != nil {
		return err
	}
	var num [24]byte
	if t.topic.name != "" {
		v.put(t.topic.key, t.topic.name, v.madeString(r.Topic))
	}
	if t.partition.name != "" {
		v.put(t.partition.key, t.partition.name, v.madeText(strconv.AppendInt(num[:0], int64(r.Partition), 10)))
	}
	if t.offset.name != "" {
		v.put(t.offset.key, t.offset.name, v.madeText(strconv.AppendInt(num[:0], r.Offset, 10)))
	}
	if t.timestamp.name != "" && !r.Timestamp.IsZero() {
		v.put(t.timestamp.key, t.timestamp.name, v.madeText(strconv.AppendInt(num[:0], r.Timestamp.UnixMilli(), 10)))
	}
	if t.static.name != "" && t.hasStaticValue {
		v.put(t.static.key, t.static.name, t.staticText)
	}
	return nil
}

// ReplaceField (ReplaceField.applySchemaless): the members kept by
// exclude and include, renamed, in the producer's order. A rename onto a
// name another kept member has leaves one member of that name (the last),
// as Connect's HashMap does.
func (t *replaceField) editJSON(v *jsonValue, _ *Record) error {
	if err := v.object("field replacement"); err != nil {
		return err
	}
	kept := v.members[:0]
	renamed := false
	for _, m := range v.members {
		name := m.name()
		if t.excludeSet[string(name)] || (len(t.includeSet) > 0 && !t.includeSet[string(name)]) {
			continue
		}
		if to, ok := t.renameKeys[string(name)]; ok {
			m.key, renamed = to, true
		}
		kept = append(kept, m)
	}
	if renamed {
		kept = dropShadowed(kept)
	}
	v.members = kept
	return nil
}

// dropShadowed keeps only the last member of each name.
func dropShadowed(ms []member) []member {
	out := ms[:0]
	for i, m := range ms {
		if find(ms[i+1:], string(m.name())) < 0 {
			out = append(out, m)
		}
	}
	return out
}

// MaskField (MaskField.applySchemaless): each named member's value
// becomes the empty value of its type as JsonConverter reads it (an
// integral number is a Long: 0; another number a Double: 0.0; "", false,
// [], {}), or the replacement (numbers and strings only); null stays
// null. A name the object lacks is put with null, as Connect's
// updatedValue.put(field, masked(value.get(field))) does.
func (t *maskField) editJSON(v *jsonValue, _ *Record) error {
	if err := v.object("mask fields"); err != nil {
		return err
	}
	for i, name := range t.fields {
		at := find(v.members, name)
		if at < 0 {
			v.members = append(v.members, member{key: t.keys[i], val: jsonNull})
			continue
		}
		masked, err := t.maskJSON(v.members[at].val)
		if err != nil {
			return fmt.Errorf("field %q: %w", name, err)
		}
		v.members[at].val = masked
	}
	return nil
}

var (
	jsonNull      = []byte("null")
	jsonFalse     = []byte("false")
	jsonZero      = []byte("0")
	jsonZeroFloat = []byte("0.0")
	jsonEmptyStr  = []byte(`""`)
	jsonEmptyArr  = []byte("[]")
	jsonEmptyObj  = []byte("{}")
)

func (t *maskField) maskJSON(val []byte) ([]byte, error) {
	kind := jsonKind(val)
	switch {
	case kind == "null":
		return val, nil
	case !t.hasRepl:
		switch kind {
		case "a boolean":
			return jsonFalse, nil
		case "a string":
			return jsonEmptyStr, nil
		case "an array":
			return jsonEmptyArr, nil
		case "an object":
			return jsonEmptyObj, nil
		}
		if isIntegral(val) {
			return jsonZero, nil
		}
		return jsonZeroFloat, nil
	case kind == "a string":
		return t.replText, nil
	case kind == "a number" && isIntegral(val):
		if t.replLong == nil {
			return nil, fmt.Errorf("unable to convert replacement %q to a Long (the value's type)", t.replacement)
		}
		return t.replLong, nil
	case kind == "a number":
		if t.replDouble == nil {
			return nil, fmt.Errorf("unable to convert replacement %q to a Double (the value's type)", t.replacement)
		}
		return t.replDouble, nil
	}
	return nil, fmt.Errorf("cannot mask %s with a custom replacement (Connect masks numbers and strings only)", kind)
}

// isIntegral: Jackson reads a number without fraction or exponent as an
// integer, which JsonConverter makes a Long.
func isIntegral(num []byte) bool {
	for _, c := range num {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

// prepareJSON precomputes the replacement's text for each type it can
// mask: as a Long (Values.convertToLong: an integer, or a decimal
// truncated), a Double (Double.toString, as Jackson writes it) and a
// string.
func (t *maskField) prepareJSON() {
	t.keys = make([][]byte, len(t.fields))
	for i, f := range t.fields {
		t.keys[i] = appendJSONString(nil, f)
	}
	if !t.hasRepl {
		return
	}
	t.replText = appendJSONString(nil, t.replacement)
	if n, err := strconv.ParseInt(t.replacement, 10, 64); err == nil {
		t.replLong = strconv.AppendInt(nil, n, 10)
	} else if f, err := strconv.ParseFloat(t.replacement, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) && math.Abs(f) < 1<<63 {
		t.replLong = strconv.AppendInt(nil, int64(f), 10)
	}
	if f, err := strconv.ParseFloat(t.replacement, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
		t.replDouble = []byte(javaFloat(f, 64))
	}
}

// HoistField (HoistField.apply, schemaless branch): the value becomes the
// one member of a new object. A null value stays null (see valueRewriter:
// Connect would hoist it into {"field": null}).
func (t *hoistField) editJSON(v *jsonValue, _ *Record) error {
	text := v.current()
	if text == nil {
		text = jsonNull
	}
	v.members = append(v.members[:0], member{key: t.key, val: text})
	v.isObj = true
	return nil
}

// ExtractField (ExtractField.apply, schemaless branch with
// SingleFieldPath.valueFrom(Map)): the value becomes the named member's
// value; a name the object lacks, or a null object on a V2 path, makes it
// null. A step of a V2 path that is not an object fails, as Connect's
// requireMapOrNull does.
func (t *extractField) editJSON(v *jsonValue, _ *Record) error {
	if err := v.object("field extraction"); err != nil {
		return err
	}
	ms := v.members
	for _, step := range t.path[:len(t.path)-1] {
		at := find(ms, step)
		if at < 0 || isJSONNull(ms[at].val) {
			v.setText(nil)
			return nil
		}
		var err error
		if v.nested, err = parseObject(ms[at].val, v.nested[:0]); err != nil {
			return errors.Join(errNotObject("nested field access", ms[at].val), err)
		}
		ms = v.nested
	}
	if at := find(ms, t.path[len(t.path)-1]); at >= 0 {
		v.setText(ms[at].val)
	} else {
		v.setText(nil)
	}
	return nil
}

// applyJSON is ValueToKey.applySchemaless: the key becomes a JSON object
// of the named members of the value, in the configured order, null for a
// name the value lacks. The value is unchanged.
func (t *valueToKey) applyJSON(r *Record) error {
	jv := jsonValuePool.Get().(*jsonValue)
	defer jv.release()
	jv.reset(r.Value.Bytes)
	if err := jv.object("copying fields from value to key"); err != nil {
		return err
	}
	out := r.buffer(len(r.Value.Bytes)/2 + 16)
	out = append(out, '{')
	for i, name := range t.fields {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, t.keys[i]...)
		out = append(out, ':')
		val := jsonNull
		if at := find(jv.members, name); at >= 0 {
			val = jv.members[at].val
		}
		out = appendCompact(out, val)
	}
	out = append(out, '}')
	r.keep(out)
	r.Key = Value{Bytes: out}
	return nil
}
