package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/hdfs-sink/hdfs-sink/format/jsonstr"
	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
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
	if !jv.isObj && jv.text == nil {
		*val = Value{} // made null: before taking a buffer it would not fill
		return nil
	}
	out, _ := jv.appendTo(r.buffer(len(val.Bytes) + 64))
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
		t.keys[i] = jsonstr.Append(nil, f)
	}
	if !t.hasRepl {
		return
	}
	t.replText = jsonstr.Append(nil, t.replacement)
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
			return objectError("nested field access", ms[at].val, err)
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

// Flatten (Flatten.applySchemaless): members whose value is an object are
// replaced by that object's members, named parent<delimiter>child, in
// place, recursively; every other value (arrays too) is kept as it is. A
// flattened name that comes twice keeps the first one's place and the
// last one's value (LinkedHashMap.put).
func (t *flatten) editJSON(v *jsonValue, _ *Record) error {
	if err := v.object("flattening"); err != nil {
		return err
	}
	nested := false
	for _, m := range v.members {
		if jsonKind(m.val) == "an object" {
			nested = true
			break
		}
	}
	if !nested {
		return nil
	}
	flat, err := t.flattenJSON(v, nil, "", v.members)
	if err != nil {
		return err
	}
	v.members = append(v.members[:0], flat...)
	return nil
}

func (t *flatten) flattenJSON(v *jsonValue, out []member, prefix string, ms []member) ([]member, error) {
	for _, m := range ms {
		key := m.key
		name := string(m.name())
		if prefix != "" {
			name = prefix + t.delim + name
			key = v.madeString(name)
		}
		if jsonKind(m.val) != "an object" {
			if at := find(out, name); at >= 0 {
				out[at].val = m.val
			} else {
				out = append(out, member{key: key, val: m.val})
			}
			continue
		}
		sub, err := parseObject(m.val, nil)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		if out, err = t.flattenJSON(v, out, name, sub); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// jsonPrim is a JSON scalar as JsonConverter reads it without a schema:
// an integral number is a Long, another number a Double, then Boolean
// and String; from is its Avro kind, for castValue.
func jsonPrim(val []byte) (v any, from avsc.Kind, err error) {
	switch kind := jsonKind(val); kind {
	case "a string":
		var s string
		err = json.Unmarshal(val, &s)
		return s, avsc.String, err
	case "a boolean":
		return string(bytes.TrimSpace(val)) == "true", avsc.Boolean, nil
	case "a number":
		num := string(bytes.TrimSpace(val))
		if isIntegral(val) {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil {
				return nil, 0, fmt.Errorf("%s is out of a Long's range", num)
			}
			return n, avsc.Long, nil
		}
		f, err := strconv.ParseFloat(num, 64)
		return f, avsc.Double, err
	default:
		return nil, 0, fmt.Errorf("%s is not a primitive", kind)
	}
}

// appendPrimJSON writes a cast's or a conversion's result as Jackson
// writes the Java value: numbers as Java prints them (Float.toString for
// float32), NaN and infinities as strings (Jackson quotes them).
func appendPrimJSON(dst []byte, v any, to string) []byte {
	switch x := v.(type) {
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		bits := 64
		if to == "float32" {
			bits = 32
		}
		s := javaFloat(x, bits)
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return jsonstr.Append(dst, s)
		}
		return append(dst, s...)
	case bool:
		return strconv.AppendBool(dst, x)
	case string:
		return jsonstr.Append(dst, x)
	}
	return append(dst, "null"...)
}

// Cast (Cast.applySchemaless): each named member's value cast as
// castValueToType casts the Java value JsonConverter read; a name the
// value lacks is put with null; objects and arrays cannot be cast.
func (t *cast) editJSON(v *jsonValue, _ *Record) error {
	if err := v.object("cast types"); err != nil {
		return err
	}
	for _, name := range t.order {
		at := find(v.members, name)
		if at < 0 { // absent: put with null (find said so, no second search)
			v.members = append(v.members, member{key: v.madeString(name), val: jsonNull})
			continue
		}
		val := v.members[at].val
		if jsonKind(val) == "null" {
			continue
		}
		in, from, err := jsonPrim(val)
		if err != nil {
			return fmt.Errorf("field %q: Cast does not support casting from %w", name, err)
		}
		to := t.targets[name]
		out, err := castValue(in, from, to)
		if err != nil {
			return fmt.Errorf("field %q: value (%s) %w", name, val, err)
		}
		start := len(v.made)
		v.made = appendPrimJSON(v.made, out, to)
		v.members[at].val = v.made[start:]
	}
	return nil
}

// TimestampConverter (TimestampConverter.applySchemaless on a field): a
// Long is a unix time (unix.precision), a String is parsed with format;
// the result goes through java.util.Date (milliseconds) as in Connect.
// Date, Time and Timestamp results are java.util.Dates, which the
// reference's JSON format (Jackson) writes as epoch milliseconds: the
// day's midnight, the time within 1970-01-01, the instant. A name the
// value lacks is put with null.
func (t *timestampConverter) editJSON(v *jsonValue, _ *Record) error {
	if err := v.object("converting timestamp formats"); err != nil {
		return err
	}
	at := find(v.members, t.field)
	if at < 0 { // absent: put with null (find said so, no second search)
		v.members = append(v.members, member{key: v.madeString(t.field), val: jsonNull})
		return nil
	}
	val := v.members[at].val
	if jsonKind(val) == "null" {
		return nil
	}
	ms, err := t.jsonMillis(val)
	if err != nil {
		return fmt.Errorf("field %q: %w", t.field, err)
	}
	start := len(v.made)
	v.made = t.appendJSONTime(v.made, ms)
	v.members[at].val = v.made[start:]
	return nil
}

// jsonMillis reads a field's value as Connect infers its type
// (inferTimestampType): Long → unix, String → string; no other.
func (t *timestampConverter) jsonMillis(val []byte) (int64, error) {
	in, from, err := jsonPrim(val)
	switch {
	case err == nil && from == avsc.Long:
		n, unit := in.(int64), unixUnits[t.precision]
		if unit >= time.Millisecond {
			return n * int64(unit/time.Millisecond), nil
		}
		return n / int64(time.Millisecond/unit), nil
	case err == nil && from == avsc.String:
		if t.layout == "" {
			return 0, errors.New("a string timestamp needs format")
		}
		tm, err := time.ParseInLocation(t.layout, in.(string), time.UTC)
		if err != nil {
			return 0, fmt.Errorf("%q does not match format: %v", in, err)
		}
		return tm.UnixMilli(), nil
	}
	return 0, fmt.Errorf("TimestampConverter does not support %s as a timestamp (a Long or a String)", jsonKind(val))
}

func (t *timestampConverter) appendJSONTime(dst []byte, ms int64) []byte {
	const day = 86400000
	switch t.target {
	case "string":
		return jsonstr.Append(dst, time.UnixMilli(ms).UTC().Format(t.layout))
	case "unix":
		unit := unixUnits[t.precision]
		if unit >= time.Millisecond {
			return strconv.AppendInt(dst, ms/int64(unit/time.Millisecond), 10)
		}
		return strconv.AppendInt(dst, ms*int64(time.Millisecond/unit), 10)
	case "Date":
		return strconv.AppendInt(dst, floorDiv(ms, day)*day, 10)
	case "Time":
		return strconv.AppendInt(dst, ms-floorDiv(ms, day)*day, 10)
	}
	return strconv.AppendInt(dst, ms, 10)
}

// applyJSON is HeaderFrom.applySchemaless on the schemaless JSON value
// (or key) *v: each field's value becomes a header as
// SimpleHeaderConverter writes a primitive (its string form; a field the
// object lacks, or null, a null header); with move the fields leave the
// object. Objects and arrays are refused, as on the schema path.
func (t *headerFrom) applyJSON(r *Record, v *Value) error {
	jv := jsonValuePool.Get().(*jsonValue)
	defer jv.release()
	jv.reset(v.Bytes)
	purpose := "header copy" // a constant: no string built per record
	if t.move {
		purpose = "header move"
	}
	if err := jv.object(purpose); err != nil {
		return err
	}
	headers := slices.Clip(r.Headers)
	for j, name := range t.fields {
		var b []byte
		if at := find(jv.members, name); at >= 0 && jsonKind(jv.members[at].val) != "null" {
			x, from, err := jsonPrim(jv.members[at].val)
			if err != nil {
				return fmt.Errorf("field %q: %w: hdfs-sink writes only primitives into headers", name, err)
			}
			b = []byte(javaString(x, from))
		}
		headers = append(headers, kgo.RecordHeader{Key: t.headers[j], Value: b})
	}
	r.Headers = headers
	if !t.move {
		return nil
	}
	kept := jv.members[:0]
	for _, m := range jv.members {
		if !slices.Contains(t.fields, string(m.name())) {
			kept = append(kept, m)
		}
	}
	jv.members = kept
	out, _ := jv.appendTo(r.buffer(len(v.Bytes)))
	r.keep(out)
	*v = Value{Bytes: out}
	return nil
}
