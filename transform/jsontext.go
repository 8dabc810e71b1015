package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/hdfs-sink/hdfs-sink/format/jsonstr"
)

// Schemaless values (JsonConverter with schemas.enable=false) are JSON
// text: Value.Schema nil, Value.Bytes the text as the producer wrote it
// (the converter checked it is JSON). Connect's transforms see such a
// value as a java.util.Map and apply their schemaless branch to it; here a
// run of transforms parses the top-level object once into its members, in
// the producer's order, each kept as the text of its key and of its value
// (nested values are never decoded unless a transform reaches into them),
// edits the members and writes them back out as compact JSON. Connect's
// HashMap has no order; keeping the producer's, and putting added members
// at the end, is the order a reader can predict.

// member is one member of a JSON object: its key as written (the quoted
// string token, escapes and all) and its value's text.
type member struct{ key, val []byte }

// name is the member's key, unquoted: the token's bytes when it has no
// escape (no allocation), else the decoded string.
func (m member) name() []byte {
	raw := m.key[1 : len(m.key)-1]
	for _, c := range raw {
		if c == '\\' {
			var s string
			if json.Unmarshal(m.key, &s) != nil {
				return raw
			}
			return []byte(s)
		}
	}
	return raw
}

// jsonValue is a schemaless value while a run of transforms works on it:
// its text, or, once a transform needed an object, its members (text is
// then stale). A nil text that is not an object is JSON null.
type jsonValue struct {
	text    []byte
	members []member
	isObj   bool
	// made holds the text of the keys and values the transforms made;
	// members point into it (append may move it: the old array stays
	// valid for the members made before).
	made []byte
	// nested is scratch for an object a transform reaches into.
	nested []member
}

var jsonValuePool = sync.Pool{New: func() any { return new(jsonValue) }}

func (v *jsonValue) reset(text []byte) {
	*v = jsonValue{text: text, members: v.members[:0], made: v.made[:0], nested: v.nested[:0]}
}

// release returns v to the pool, dropping what it points to.
func (v *jsonValue) release() {
	clear(v.members[:cap(v.members)])
	clear(v.nested[:cap(v.nested)])
	v.reset(nil)
	jsonValuePool.Put(v)
}

// errNotObject is Connect's requireMap: a transform that needs the fields
// of a schemaless value fails on any other JSON value.
func errNotObject(purpose string, text []byte) error {
	return fmt.Errorf("only JSON objects are supported in absence of schema for [%s], found: %s (Connect's requireMap)", purpose, jsonKind(text))
}

// jsonKind names the JSON type of a value's text, for errors.
func jsonKind(text []byte) string {
	i := skipSpace(text, 0)
	if text == nil || i == len(text) {
		return "null"
	}
	switch text[i] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// objectError is why text could not be read as an object: not one
// (requireMap), or not JSON.
func objectError(purpose string, text []byte, err error) error {
	if errors.Is(err, errNotAnObject) {
		return errNotObject(purpose, text)
	}
	return fmt.Errorf("%w (%s)", err, purpose)
}

var errNotAnObject = errors.New("not an object")

// object makes v's members current: the text is parsed the first time a
// transform of the run needs an object.
func (v *jsonValue) object(purpose string) error {
	if v.isObj {
		return nil
	}
	ms, err := parseObject(v.text, v.members[:0])
	if err != nil {
		return objectError(purpose, v.text, err)
	}
	v.members, v.isObj = ms, true
	return nil
}

// setText makes the value val's text (nil: null).
func (v *jsonValue) setText(val []byte) {
	if isJSONNull(val) {
		val = nil
	}
	v.text, v.isObj, v.members = val, false, v.members[:0]
}

// current is the value's text, writing the members out (into made) when
// the value is an object.
func (v *jsonValue) current() []byte {
	if !v.isObj {
		return v.text
	}
	start := len(v.made)
	v.made = appendObject(v.made, v.members)
	return v.made[start:]
}

// find is the index of the member named name, the last one if the
// producer wrote the key twice (Jackson's rule, which Connect reads
// with); -1: none.
func find(ms []member, name string) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if string(ms[i].name()) == name {
			return i
		}
	}
	return -1
}

// put sets member name (its key quoted, as keyText) to val: in place when
// the object has it, else at the end (Connect's Map.put).
func (v *jsonValue) put(keyText []byte, name string, val []byte) {
	if i := find(v.members, name); i >= 0 {
		v.members[i].val = val
		return
	}
	v.members = append(v.members, member{key: keyText, val: val})
}

// madeString is s as a JSON string, in made.
func (v *jsonValue) madeString(s string) []byte {
	start := len(v.made)
	v.made = jsonstr.Append(v.made, s)
	return v.made[start:]
}

// madeText is b copied into made (a number a transform formatted).
func (v *jsonValue) madeText(b []byte) []byte {
	start := len(v.made)
	v.made = append(v.made, b...)
	return v.made[start:]
}

// appendTo writes the value as compact JSON; ok false: it is null.
func (v *jsonValue) appendTo(dst []byte) ([]byte, bool) {
	if v.isObj {
		return appendObject(dst, v.members), true
	}
	if v.text == nil {
		return dst, false
	}
	return appendCompact(dst, v.text), true
}

func appendObject(dst []byte, ms []member) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.key...)
		dst = append(dst, ':')
		dst = appendCompact(dst, m.val)
	}
	return append(dst, '}')
}

func isJSONNull(b []byte) bool {
	i := skipSpace(b, 0)
	return b == nil || (len(b)-i >= 4 && string(b[i:i+4]) == "null" && skipSpace(b, i+4) == len(b))
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

var errBadJSON = errors.New("the value is not valid JSON")

// parseObject reads a JSON object's members into dst. The converter
// checked the text is JSON; the scan still fails cleanly on anything else.
func parseObject(b []byte, dst []member) ([]member, error) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return dst, errNotAnObject
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		if skipSpace(b, i+1) != len(b) {
			return dst, errBadJSON
		}
		return dst, nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return dst, errBadJSON
		}
		kEnd, err := skipString(b, i)
		if err != nil {
			return dst, err
		}
		j := skipSpace(b, kEnd)
		if j >= len(b) || b[j] != ':' {
			return dst, errBadJSON
		}
		vStart := skipSpace(b, j+1)
		vEnd, err := skipValue(b, vStart)
		if err != nil {
			return dst, err
		}
		dst = append(dst, member{key: b[i:kEnd], val: b[vStart:vEnd]})
		i = skipSpace(b, vEnd)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			if skipSpace(b, i+1) != len(b) {
				return dst, errBadJSON
			}
			return dst, nil
		default:
			return dst, errBadJSON
		}
	}
}

// skipString is the end of the string token starting at b[i] ('"').
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1, nil
		}
	}
	return 0, errBadJSON
}

// skipValue is the end of the value starting at b[i]: nested arrays and
// objects by their brackets, outside strings.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errBadJSON
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, errBadJSON
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != ',' && b[j] != '}' && b[j] != ']' {
		j++
	}
	if j == i {
		return 0, errBadJSON
	}
	return j, nil
}

// appendCompact copies JSON text without the spaces between tokens, run
// by run (a producer's compact JSON is one run).
func appendCompact(dst, b []byte) []byte {
	start := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			end, err := skipString(b, i)
			if err != nil {
				return append(dst, b[start:]...)
			}
			i = end - 1
		case isSpace(c):
			dst = append(dst, b[start:i]...)
			start = i + 1
		}
	}
	return append(dst, b[start:]...)
}
