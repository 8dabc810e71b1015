package syntax

import (
	"maps"
	"slices"
	"strings"
)

// FormatProperties writes a connector's settings as a .properties file
// that ParseProperties (and java.util.Properties) reads back to the same
// map: one key=value line per key, sorted, with header comment lines
// first. The daemon writes a connector that came from a .properties file
// in that format, where it was.
func FormatProperties(header []string, m map[string]string) []byte {
	var b strings.Builder
	for _, h := range header {
		b.WriteString("# " + strings.ReplaceAll(h, "\n", " ") + "\n")
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		b.WriteString(escapeProperty(k, true))
		b.WriteByte('=')
		b.WriteString(escapeProperty(m[k], false))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// escapeProperty escapes s as Properties.store does: backslashes and the
// control characters always; in a key the separators and comment marks;
// in a value a leading space (a trailing one is kept by the reader).
// Other characters are written as they are: the file is UTF-8.
func escapeProperty(s string, key bool) string {
	var b strings.Builder
	for i, r := range s {
		switch r {
		case '\\':
			b.WriteString(`\\`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\f':
			b.WriteString(`\f`)
		case '=', ':', '#', '!':
			if key {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case ' ':
			if key || i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
