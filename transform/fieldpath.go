package transform

import (
	"fmt"
	"strings"
)

// Connect's field.syntax.version (KIP-821): V1 names a top-level field,
// V2 a path of nested fields in dotted notation, where a step holding dots
// is wrapped in backticks and a backtick inside such a step that is
// followed by a dot is escaped with a backslash.
const fieldSyntaxKey = "field.syntax.version"

// fieldSyntaxV2 reads the transform's field.syntax.version: V1 (the
// default) or V2, in any case, as Connect accepts them.
func fieldSyntaxV2(p props) bool {
	switch v := strings.ToUpper(p.getDefault(fieldSyntaxKey, "V1")); v {
	case "V1":
		return false
	case "V2":
		return true
	}
	p.fail(fieldSyntaxKey, fmt.Sprintf("must be V1 or V2, not %q", p.get(fieldSyntaxKey)))
	return false
}

// fieldPath splits a field path into its steps: one step under V1, the
// dotted steps under V2. A backtick that opens a step and is never closed
// is an error, as in Connect.
func fieldPath(path string, v2 bool) ([]string, error) {
	if !v2 {
		return []string{path}, nil
	}
	var steps []string
	for i := 0; i < len(path); {
		var step string
		var err error
		if path[i] == '`' {
			step, i, err = quotedStep(path, i)
			if err != nil {
				return nil, err
			}
		} else {
			end := strings.IndexByte(path[i:], '.')
			if end < 0 {
				steps = append(steps, path[i:])
				break
			}
			step, i = path[i:i+end], i+end+1
		}
		steps = append(steps, step)
	}
	if strings.HasSuffix(path, ".") {
		steps = append(steps, "") // a trailing dot ends in an empty name
	}
	return steps, nil
}

// quotedStep reads the step whose opening backtick is at open. It ends at
// the first backtick that is followed by a dot (or ends the path) and is
// not escaped; an escaped one (\`) stands for a backtick, other backticks
// are part of the name. It returns the step and where the next one starts.
func quotedStep(path string, open int) (string, int, error) {
	var b strings.Builder
	start := open + 1
	for i := open + 1; i < len(path); i++ {
		if path[i] != '`' {
			continue
		}
		escaped := path[i-1] == '\\'
		atEnd := i == len(path)-1
		switch {
		case atEnd && !escaped:
			b.WriteString(path[start:i])
			return b.String(), len(path), nil
		case atEnd:
			// An escaped backtick ending the path closes nothing.
		case path[i+1] != '.':
			// Not followed by a dot: part of the name.
		case escaped:
			b.WriteString(path[start : i-1])
			b.WriteByte('`')
			start = i + 1
		default:
			b.WriteString(path[start:i])
			return b.String(), i + 2, nil
		}
	}
	return "", 0, fmt.Errorf("incomplete backtick pair in path %q at position %d: add a backslash before the backtick to escape it", path, open)
}
