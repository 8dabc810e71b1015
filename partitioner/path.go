package partitioner

import (
	"fmt"
	"strings"
)

// hiveEscaped are the characters Hive's FileUtils.escapePathName writes as
// %XX in a partition directory name. Field values are escaped the same way,
// so a directory and the partition Hive derives from its name agree, and a
// value holding "/" stays one directory (the reference writes it raw and
// splits the path).
var hiveEscaped = func() (set [128]bool) {
	for c := 0; c < 0x20; c++ {
		set[c] = true
	}
	for _, c := range "\"#%'*/:=?\\\x7f{[]^" {
		set[c] = true
	}
	return set
}()

// hiveDefaultPartition is Hive's directory name for an empty value.
const hiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// escapePathName escapes s as Hive's FileUtils.escapePathName does.
func escapePathName(s string) string {
	if s == "" {
		return hiveDefaultPartition
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 128 && hiveEscaped[c] {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// unescapePathName reverses escapePathName as Hive's unescapePathName does:
// a "%" not followed by two hex digits stays as it is.
func unescapePathName(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// splitPath splits "k=v/k=v" into its values, checking that the names are
// fields in order. unescape undoes Hive escaping of names and values.
func splitPath(encoded string, fields []string, unescape bool) ([]string, error) {
	parts := strings.Split(encoded, "/")
	if len(parts) != len(fields) {
		return nil, &PathError{Path: encoded, Reason: fmt.Sprintf(
			"has %d components, want %d (%s)", len(parts), len(fields), strings.Join(fields, ", "))}
	}
	values := make([]string, len(parts))
	for i, p := range parts {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			return nil, &PathError{Path: encoded, Reason: fmt.Sprintf("component %q is not name=value", p)}
		}
		if unescape {
			name, value = unescapePathName(name), unescapePathName(value)
		}
		if name != fields[i] {
			return nil, &PathError{Path: encoded, Reason: fmt.Sprintf(
				"component %d is column %q, want %q", i+1, name, fields[i])}
		}
		values[i] = value
	}
	return values, nil
}
