package syntax

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Property is one key of a .properties file, with the line its key starts
// on (for messages).
type Property struct {
	Key, Value string
	Line       int
}

// ParseProperties reads a Java .properties file as java.util.Properties
// does (comments "#" and "!", separators "=", ":" or white space, a
// trailing odd backslash continuing the line, escapes \t \n \r \f \uXXXX),
// with three differences that turn silent surprises into errors: the file
// must be valid UTF-8 (Java reads ISO-8859-1 bytes), a key may appear once
// (Java keeps the last), and a malformed \u escape names its place.
func ParseProperties(source string, data []byte) ([]Property, error) {
	data = trimBOM(data)
	if err := checkUTF8(source, data); err != nil {
		return nil, err
	}
	var out []Property
	first := map[string]int{}
	for _, ll := range logicalLines(string(data)) {
		p, err := ll.property(source)
		if err != nil {
			return nil, err
		}
		if p == nil {
			continue
		}
		if at, dup := first[p.Key]; dup {
			return nil, &Error{Source: source, Line: p.Line, Col: 1,
				Msg: fmt.Sprintf("duplicate key %q (first set on line %d)", p.Key, at)}
		}
		first[p.Key] = p.Line
		out = append(out, *p)
	}
	return out, nil
}

// propertiesLine is how a .properties file's first setting or comment
// starts; no JSON document starts so.
var propertiesLine = regexp.MustCompile(`^(?:[#!]|[A-Za-z][A-Za-z0-9._-]*\s*[=:])`)

// LooksLikeProperties reports a file whose first non-blank line is a
// properties comment or key=value: a standalone .properties connector
// saved under a .json name, which deserves better than a JSON syntax
// error at line 1.
func LooksLikeProperties(data []byte) bool {
	for _, line := range splitLines(string(trimBOM(data))) {
		if line = strings.TrimSpace(line); line != "" {
			return propertiesLine.MatchString(line)
		}
	}
	return false
}

// logicalLine is one property's text: its physical lines joined, the
// leading white space of continuation lines dropped, as Java does.
type logicalLine struct {
	text string
	line int // where it starts
}

func logicalLines(s string) []logicalLine {
	var out []logicalLine
	lines := splitLines(s)
	for i := 0; i < len(lines); i++ {
		start := i
		text := strings.TrimLeft(lines[i], " \t\f")
		if text == "" || text[0] == '#' || text[0] == '!' {
			continue
		}
		for continues(text) && i+1 < len(lines) {
			i++
			text = text[:len(text)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continues(text) {
			text = text[:len(text)-1] // a continuation at end of file continues nothing
		}
		out = append(out, logicalLine{text: text, line: start + 1})
	}
	return out
}

// splitLines splits on \n, \r\n and \r, the line ends Properties knows.
func splitLines(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	return strings.Split(strings.ReplaceAll(s, "\r", "\n"), "\n")
}

// continues reports an odd number of trailing backslashes.
func continues(s string) bool {
	n := len(s) - len(strings.TrimRight(s, `\`))
	return n%2 == 1
}

// property splits the line into key and value, unescaping both.
func (ll logicalLine) property(source string) (*Property, error) {
	end := keyEnd(ll.text)
	rawKey, rest := ll.text[:end], ll.text[end:]
	rest = strings.TrimLeft(rest, " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	key, err := unescapeProperty(rawKey)
	if err == nil {
		var value string
		if value, err = unescapeProperty(rest); err == nil {
			return &Property{Key: key, Value: value, Line: ll.line}, nil
		}
	}
	return nil, &Error{Source: source, Line: ll.line, Col: 1, Msg: err.Error()}
}

// keyEnd is the index of the first unescaped separator ("=", ":" or white
// space).
func keyEnd(s string) int {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '=', ':', ' ', '\t', '\f':
			return i
		}
	}
	return len(s)
}

func unescapeProperty(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch c := s[i]; c {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			r, err := unicodeEscape(s[i+1:])
			if err != nil {
				return "", err
			}
			b.WriteRune(r)
			i += 4
		default:
			b.WriteByte(c) // Java drops the backslash of any other escape
		}
	}
	return b.String(), nil
}

func unicodeEscape(s string) (rune, error) {
	if len(s) < 4 {
		return 0, fmt.Errorf(`malformed \uxxxx escape: \u%s`, s)
	}
	n, err := strconv.ParseUint(s[:4], 16, 16)
	if err != nil {
		return 0, fmt.Errorf(`malformed \uxxxx escape: \u%s`, s[:4])
	}
	return rune(n), nil
}
