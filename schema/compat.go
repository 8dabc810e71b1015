package schema

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/schema/avsc"
)

// Compatibility is the connector's schema.compatibility: what a
// topic-partition writer does when a record's schema differs from the
// "current" schema of its open files. It follows kafka-connect-storage-common
// StorageSchemaCompatibility (the reference), with one deliberate change:
// a change that is not material (see Decide) never rotates or projects.
type Compatibility uint8

// Compatibility modes. The zero value is the reference's default, NONE.
const (
	CompatNone Compatibility = iota
	CompatBackward
	CompatForward
	CompatFull
)

var compatNames = [...]string{CompatNone: "NONE", CompatBackward: "BACKWARD", CompatForward: "FORWARD", CompatFull: "FULL"}

func (c Compatibility) String() string {
	if int(c) < len(compatNames) {
		return compatNames[c]
	}
	return fmt.Sprintf("Compatibility(%d)", c)
}

// ErrBadCompatibility: a schema.compatibility value is not a known mode.
var ErrBadCompatibility = errors.New("schema.compatibility must be NONE, BACKWARD, FORWARD or FULL")

// ParseCompatibility reads a schema.compatibility value, case-insensitively;
// "" is NONE, the reference's default.
func ParseCompatibility(s string) (Compatibility, error) {
	if s == "" {
		return CompatNone, nil
	}
	for i, name := range compatNames {
		if strings.EqualFold(s, name) {
			return Compatibility(i), nil
		}
	}
	return CompatNone, fmt.Errorf("schema: %q: %w", s, ErrBadCompatibility)
}

// Decision is what the writer does with a record whose schema is incoming
// while its open files use current.
type Decision uint8

const (
	// Same: the schemas differ at most in documentation, aliases, defaults,
	// order or custom properties. Both encode every value in the same bytes
	// and map to the same output types, so the datum is appended as it is
	// and the files stay open (reference bug #393).
	Same Decision = iota
	// Rotate: close the open files and continue with incoming as the
	// current schema; the datum is written unchanged.
	Rotate
	// ProjectToCurrent: keep the files and the current schema; rewrite the
	// datum with Project(incoming, current, datum).
	ProjectToCurrent
)

func (d Decision) String() string {
	switch d {
	case Same:
		return "same"
	case Rotate:
		return "rotate"
	case ProjectToCurrent:
		return "project"
	}
	return fmt.Sprintf("Decision(%d)", d)
}

// Decide applies mode c to a record with schema incoming arriving at a
// writer whose open files use current (nil when none is open: Rotate, i.e.
// open files with incoming). Switching between schema-less and schema-based
// records is the caller's affair; incoming must not be nil.
//
// Schema versions: the reference compares Connect schema versions (the
// subject version). The sink only sees the schema id in each record, so the
// registry id stands in for the version: registries assign ids in
// increasing order, so a later version of a subject has a higher id. This
// breaks only if a subject re-registers a schema text first registered
// earlier (the registry returns the old, lower id) or ids were imported out
// of order; such a schema counts as older.
//
// A material change is one to the Parsing Canonical Form or to logical type
// attributes (logicalType, precision, scale). Other changes give Same in
// every mode. For material changes:
//   - NONE: Rotate.
//   - BACKWARD, FULL: Rotate if incoming has the higher id, or its top-level
//     type (bar numeric promotion), full name or logical type differs from
//     current's (the reference's checks); otherwise ProjectToCurrent.
//   - FORWARD: Rotate if incoming has the lower id (the reference rotates
//     back to an older schema); otherwise ProjectToCurrent, which drops
//     the newer schema's extra fields.
//
// Before answering ProjectToCurrent, Decide compiles the projection and
// fails with *IncompatibleError (ErrIncompatible) if no datum of incoming
// can be read as current; the caller sends such records to its error path.
func (c Compatibility) Decide(current, incoming *Schema) (Decision, error) {
	if incoming == nil {
		return 0, errors.New("schema: Decide: nil incoming schema")
	}
	if current == nil {
		return Rotate, nil
	}
	if current == incoming || (current.ID == incoming.ID && current.Text == incoming.Text) {
		return Same, nil
	}
	cur, err := parse(current)
	if err != nil {
		return 0, err
	}
	inc, err := parse(incoming)
	if err != nil {
		return 0, err
	}
	if cur.material == inc.material {
		return Same, nil
	}
	if c.rotates(cur.tree, inc.tree, current.ID, incoming.ID) {
		return Rotate, nil
	}
	if _, err := cachedProjector(incoming, current); err != nil {
		return 0, err
	}
	return ProjectToCurrent, nil
}

// rotates holds the reference's per-mode checks for a material change.
func (c Compatibility) rotates(cur, inc *avsc.Node, curID, incID int32) bool {
	switch c {
	case CompatBackward, CompatFull:
		return incID > curID || topLevelDiffers(cur, inc)
	case CompatForward:
		return incID < curID
	}
	return true
}

// topLevelDiffers is the reference's BACKWARD/FULL check on the outermost
// schema: type (numeric promotion allowed), name and parameters, where the
// parameters that matter to us are the logical type attributes.
func topLevelDiffers(cur, inc *avsc.Node) bool {
	if inc.Kind != cur.Kind {
		return promotion(inc.Kind, cur.Kind) == nil
	}
	return inc.Name != cur.Name || inc.Declared != cur.Declared
}
