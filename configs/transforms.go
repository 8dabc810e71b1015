package configs

import (
	"fmt"
	"strings"
)

// TransformSpec is one entry of transforms: its alias, its class by
// transform.New's name (InsertField$Value, Filter, ...), its own keys
// (transforms.<alias>.<key>, without the prefix) and its predicate.
type TransformSpec struct {
	Alias, Class string
	Props        map[string]string
	Predicate    string // alias in Predicates; "": always applies
	Negate       bool
}

// PredicateSpec is one entry of predicates.
type PredicateSpec struct {
	Alias, Class string
	Props        map[string]string
}

const (
	transformPackage = "org.apache.kafka.connect.transforms."
	predicatePackage = "org.apache.kafka.connect.transforms.predicates."
)

// TransformClasses are the transforms hdfs-sink implements: Kafka's SMTs
// by simple name; true: the class has $Key and $Value variants.
var TransformClasses = map[string]bool{
	"InsertField": true, "ReplaceField": true, "MaskField": true, "Cast": true, "TimestampConverter": true,
	"ExtractField": true, "Flatten": true, "HoistField": true, "SetSchemaMetadata": true, "HeaderFrom": true,
	"ValueToKey": false, "RegexRouter": false, "TimestampRouter": false, "Filter": false,
	"InsertHeader": false, "DropHeaders": false,
}

// PredicateClasses are the predicates hdfs-sink implements.
var PredicateClasses = map[string]bool{"TopicNameMatches": true, "HasHeaderKey": true, "RecordIsTombstone": true}

// transformClass resolves a transforms.<alias>.type to its simple name
// (X or X$Key / X$Value): the full class name or the simple name.
func transformClass(v string) (string, bool) {
	name := strings.TrimPrefix(v, transformPackage)
	base, variant, nested := strings.Cut(name, "$")
	variants, ok := TransformClasses[base]
	switch {
	case !ok:
		return "", false
	case variants != nested:
		return "", false
	case nested && variant != "Key" && variant != "Value":
		return "", false
	}
	return name, true
}

func predicateClass(v string) (string, bool) {
	name := strings.TrimPrefix(v, predicatePackage)
	return name, PredicateClasses[name]
}

// transforms reads transforms and predicates. An unknown class is an
// error: records would reach the files other than Connect writes them.
func (p *parser) transforms(c *Connector) {
	preds := map[string]bool{}
	for _, alias := range p.list("predicates") {
		key := "predicates." + alias + ".type"
		v, _ := p.get(key)
		class, ok := predicateClass(v)
		if !ok {
			p.fail(key, v, "is not a predicate hdfs-sink implements ("+implemented(PredicateClasses, predicatePackage)+")")
			continue
		}
		preds[alias] = true
		c.Predicates = append(c.Predicates, PredicateSpec{Alias: alias, Class: class, Props: p.prefixed("predicates." + alias + ".")})
	}
	for _, alias := range p.list("transforms") {
		key := "transforms." + alias + ".type"
		v, _ := p.get(key)
		class, ok := transformClass(v)
		if !ok {
			p.fail(key, v, "is not a transform hdfs-sink implements ("+implemented(TransformClasses, transformPackage)+")")
			continue
		}
		props := p.prefixed("transforms." + alias + ".")
		s := TransformSpec{Alias: alias, Class: class, Props: props, Predicate: props["predicate"]}
		if s.Predicate != "" && !preds[s.Predicate] {
			p.fail("transforms."+alias+".predicate", s.Predicate, "names no predicate of the predicates list")
		}
		s.Negate = p.boolean("transforms."+alias+".negate", false)
		c.Transforms = append(c.Transforms, s)
	}
}

// prefixed is every key under prefix, without it (type, predicate and
// negate included: the transform ignores them).
func (p *parser) prefixed(prefix string) map[string]string {
	m := map[string]string{}
	for k := range p.raw {
		if rest, ok := strings.CutPrefix(k, prefix); ok {
			v, _ := p.get(k)
			m[rest] = v
		}
	}
	return m
}

func implemented(classes map[string]bool, pkg string) string {
	var names []string
	for _, n := range sortedKeys(classes) {
		if classes[n] {
			if pkg == transformPackage {
				names = append(names, n+"$Key", n+"$Value")
				continue
			}
		}
		names = append(names, n)
	}
	return fmt.Sprintf("%s{%s}", pkg, strings.Join(names, ", "))
}
