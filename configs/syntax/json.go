package syntax

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Object is a decoded JSON object that remembers where each key is, so
// that a problem with a member can name its line and column. Its values
// are *Object, []any, string, json.Number, bool or nil.
type Object struct {
	Keys []string // in the order of the file
	Vals map[string]any
	Pos  map[string]Position // where the key is
}

// Position is a 1-based line and column in a file.
type Position struct{ Line, Col int }

// Get is the value of k, and whether the object has it.
func (o *Object) Get(k string) (any, bool) {
	v, ok := o.Vals[k]
	return v, ok
}

// ErrAt is an *Error at key's place in o.
func (o *Object) ErrAt(source, key, msg string) error {
	at := o.Pos[key]
	return &Error{Source: source, Line: at.Line, Col: at.Col, Msg: msg}
}

// jsonDoc is one JSON file being decoded.
type jsonDoc struct {
	source string
	data   []byte
	dec    *json.Decoder
}

// DecodeJSON reads data as exactly one JSON object. Unlike encoding/json it
// refuses what would otherwise be silent: a key given twice (the last
// would win), bytes that are not UTF-8 (they would become U+FFFD), and
// anything after the object. Errors carry line and column.
func DecodeJSON(source string, data []byte) (*Object, error) {
	data = trimBOM(data)
	if err := checkUTF8(source, data); err != nil {
		return nil, err
	}
	d := &jsonDoc{source: source, data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	d.dec.UseNumber() // keep "1000" and 1000 textually identical
	v, err := d.value()
	if err != nil {
		return nil, err
	}
	obj, ok := v.(*Object)
	if !ok {
		return nil, d.errAt(0, "the file must hold one JSON object ({...}), not "+Kind(v))
	}
	end := d.skipSpace(int(d.dec.InputOffset()))
	if _, err := d.dec.Token(); err != io.EOF {
		return nil, d.errAt(end, "trailing data after the JSON object")
	}
	return obj, nil
}

func (d *jsonDoc) value() (any, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return nil, d.syntax(err)
	}
	switch tok {
	case json.Delim('{'):
		return d.object()
	case json.Delim('['):
		return d.array()
	}
	return tok, nil
}

func (d *jsonDoc) object() (*Object, error) {
	o := &Object{Vals: map[string]any{}, Pos: map[string]Position{}}
	for d.dec.More() {
		at := d.skipSpace(int(d.dec.InputOffset()))
		tok, err := d.dec.Token()
		if err != nil {
			return nil, d.syntax(err)
		}
		k := tok.(string) // the decoder only returns strings as object keys
		if first, dup := o.Pos[k]; dup {
			return nil, d.errAt(at, fmt.Sprintf("duplicate key %q (first set on line %d)", k, first.Line))
		}
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		o.Keys = append(o.Keys, k)
		line, col := lineCol(d.data, at)
		o.Vals[k], o.Pos[k] = v, Position{line, col}
	}
	_, err := d.dec.Token() // the closing brace
	return o, d.syntax(err)
}

func (d *jsonDoc) array() ([]any, error) {
	var out []any
	for d.dec.More() {
		v, err := d.value()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	_, err := d.dec.Token()
	return out, d.syntax(err)
}

// skipSpace moves past white space and a separating comma to where the
// next token starts.
func (d *jsonDoc) skipSpace(off int) int {
	for off < len(d.data) && bytes.IndexByte([]byte(" \t\r\n,:"), d.data[off]) >= 0 {
		off++
	}
	return off
}

func (d *jsonDoc) errAt(off int, msg string) error {
	line, col := lineCol(d.data, off)
	return &Error{Source: d.source, Line: line, Col: col, Msg: msg}
}

// syntax gives a decoder error its line and column.
func (d *jsonDoc) syntax(err error) error {
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &se):
		return d.errAt(max(int(se.Offset)-1, 0), se.Error())
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return d.errAt(len(d.data), "unexpected end of file: the JSON object is not closed")
	}
	return d.errAt(int(d.dec.InputOffset()), err.Error())
}

// Kind names a decoded JSON value's kind for messages: "an object", "a
// string", ...
func Kind(v any) string {
	switch v.(type) {
	case *Object:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
