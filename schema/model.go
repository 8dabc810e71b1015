package schema

import (
	"strings"
	"sync"

	"github.com/linkedin/goavro/v2"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// parsed is what this package derives from a Schema's text. goavro keeps
// its parsed schema private, and the datum scan, the compatibility decision
// (what is a material change) and projection (which writer field feeds
// which reader field) all walk the schema graph, so the text is read again
// into avsc's model. New does it once and keeps the result on the Schema:
// every use reads it without a lookup, and the formats without a parse.
type parsed struct {
	tree     *avsc.Node    // the schema graph; a recursive type is a cycle
	material string        // canonical form plus logical type attributes
	raw      *goavro.Codec // codec for the form without logical types
	err      error         // *SchemaError: tree or raw could not be built
	mapErr   error         // why the formats and Hive cannot map tree, if they cannot
	readErr  error         // why avsc could not read the text at all

	leaves     sync.Map                               // *avsc.Node → *goavro.Codec of that subtree (FieldNative)
	projectors boundedCache[*Schema, projectorResult] // reader → projection of datums of this schema onto it
}

func newParsed(s *Schema) *parsed {
	p := &parsed{}
	p.tree, p.mapErr, p.readErr = avsc.Read(s.Text)
	if p.readErr != nil {
		p.err = &SchemaError{ID: s.ID, Reason: "cannot model schema", Err: p.readErr}
		return p
	}
	raw, err := goavro.NewCodec(p.tree.Canonical())
	if err != nil {
		p.err = &SchemaError{ID: s.ID, Reason: "cannot build codec without logical types", Err: err}
		return p
	}
	p.raw, p.material = raw, p.tree.CanonicalLogical()
	return p
}

// parse returns the model of s and, if our model cannot read s, the
// *SchemaError saying why (p is never nil). A Schema built by hand rather
// than by New is parsed anew on every call.
func parse(s *Schema) (*parsed, error) {
	p := s.parsed
	if p == nil {
		p = newParsed(s)
	}
	return p, p.err
}

// rawKey is the name goavro uses for n as a union branch in the raw form
// (no logical types): the full name of a named type, else the type name.
func rawKey(n *avsc.Node) string {
	switch n.Kind {
	case avsc.Record, avsc.Enum, avsc.Fixed:
		return n.Name
	}
	return n.Kind.String()
}

// short returns the unqualified part of a full name.
func short(full string) string {
	if i := strings.LastIndexByte(full, '.'); i >= 0 {
		return full[i+1:]
	}
	return full
}
