package kafkaclient

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// LoginModule is one entry of a JAAS configuration:
// "<class> <flag> key=value ... ;".
type LoginModule struct {
	Class   string
	Flag    string // required, requisite, sufficient or optional (lower case)
	Options map[string]string
}

// ParseJAAS reads a sasl.jaas.config value in Java's syntax, as Kafka's
// JaasConfig tokenizes it: whitespace and comments (//, /* */) separate
// tokens, values are bare words or strings in single or double quotes
// with Java's escapes, and each entry ends with ";". Errors never quote
// the text: it holds passwords.
func ParseJAAS(s string) ([]LoginModule, error) {
	lx := &jaasLexer{s: s}
	var mods []LoginModule
	for {
		tok, err := lx.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		m, err := parseEntry(lx, tok)
		if err != nil {
			return nil, err
		}
		mods = append(mods, m)
	}
	if len(mods) == 0 {
		return nil, errors.New("no login module")
	}
	return mods, nil
}

var jaasFlags = []string{"required", "requisite", "sufficient", "optional"}

func parseEntry(lx *jaasLexer, first token) (LoginModule, error) {
	if first.kind != tokWord && first.kind != tokString {
		return LoginModule{}, fmt.Errorf("expected a login module class at offset %d", first.pos)
	}
	m := LoginModule{Class: first.text, Options: map[string]string{}}
	flag, err := lx.next()
	if err != nil {
		return m, err
	}
	m.Flag = strings.ToLower(flag.text)
	if (flag.kind != tokWord && flag.kind != tokString) || !contains(jaasFlags, m.Flag) {
		return m, fmt.Errorf("login module %s: the control flag must be required, requisite, sufficient or optional", m.Class)
	}
	for {
		key, err := lx.next()
		if err != nil {
			return m, err
		}
		switch key.kind {
		case tokSemi:
			return m, nil
		case tokEOF:
			return m, fmt.Errorf("login module %s: the entry is not terminated by ';'", m.Class)
		case tokWord, tokString:
			if err := parseOption(lx, &m, key.text); err != nil {
				return m, err
			}
		default:
			return m, fmt.Errorf("login module %s: unexpected '=' at offset %d", m.Class, key.pos)
		}
	}
}

func parseOption(lx *jaasLexer, m *LoginModule, key string) error {
	eq, err := lx.next()
	if err != nil {
		return err
	}
	val, err := lx.next()
	if err != nil {
		return err
	}
	if eq.kind != tokEq || (val.kind != tokWord && val.kind != tokString) {
		return fmt.Errorf("login module %s: no value for option %q (key=value, quote values holding '/', '=', ';' or spaces)", m.Class, key)
	}
	m.Options[key] = val.text
	return nil
}

type tokKind int

const (
	tokEOF tokKind = iota
	tokWord
	tokString
	tokEq
	tokSemi
)

type token struct {
	kind tokKind
	text string
	pos  int
}

// jaasLexer is java.io.StreamTokenizer as JaasConfig sets it up.
type jaasLexer struct {
	s   string
	pos int
}

func (lx *jaasLexer) next() (token, error) {
	if err := lx.skipSpaceAndComments(); err != nil {
		return token{}, err
	}
	if lx.pos >= len(lx.s) {
		return token{kind: tokEOF, pos: lx.pos}, nil
	}
	start := lx.pos
	switch c := lx.s[lx.pos]; c {
	case ';':
		lx.pos++
		return token{tokSemi, ";", start}, nil
	case '=':
		lx.pos++
		return token{tokEq, "=", start}, nil
	case '"', '\'':
		return lx.quoted(c)
	}
	for lx.pos < len(lx.s) && isWordByte(lx.s, lx.pos) {
		_, n := utf8.DecodeRuneInString(lx.s[lx.pos:])
		lx.pos += n
	}
	if lx.pos == start {
		return token{}, fmt.Errorf("unexpected character at offset %d", start)
	}
	return token{tokWord, lx.s[start:lx.pos], start}, nil
}

// isWordByte: Java's word characters here are every character above space
// except ; = / and the quotes, and the C1 controls U+0081..U+009F.
func isWordByte(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	if r <= ' ' || (r >= 0x81 && r <= 0x9f) {
		return false
	}
	return !strings.ContainsRune(`;='"/`, r)
}

// skipSpaceAndComments skips whitespace (every byte up to ' '), //, /* */
// and, because JaasConfig makes '/' a comment character, a lone '/' to the
// end of the line: an unquoted path is a comment in Java too.
func (lx *jaasLexer) skipSpaceAndComments() error {
	for lx.pos < len(lx.s) {
		c := lx.s[lx.pos]
		switch {
		case c <= ' ':
			lx.pos++
		case strings.HasPrefix(lx.s[lx.pos:], "/*"):
			end := strings.Index(lx.s[lx.pos+2:], "*/")
			if end < 0 {
				return fmt.Errorf("unterminated /* comment at offset %d", lx.pos)
			}
			lx.pos += end + 4
		case c == '/':
			end := strings.IndexAny(lx.s[lx.pos:], "\r\n")
			if end < 0 {
				end = len(lx.s) - lx.pos
			}
			lx.pos += end
		default:
			return nil
		}
	}
	return nil
}

// quoted reads a quoted string with StreamTokenizer's escapes.
func (lx *jaasLexer) quoted(q byte) (token, error) {
	start := lx.pos
	lx.pos++
	var b strings.Builder
	for lx.pos < len(lx.s) {
		c := lx.s[lx.pos]
		switch {
		case c == q:
			lx.pos++
			return token{tokString, b.String(), start}, nil
		case c == '\n' || c == '\r':
			return token{}, fmt.Errorf("unterminated quoted value starting at offset %d", start)
		case c == '\\' && lx.pos+1 < len(lx.s):
			lx.pos++
			lx.escape(&b)
		default:
			b.WriteByte(c)
			lx.pos++
		}
	}
	return token{}, fmt.Errorf("unterminated quoted value starting at offset %d", start)
}

var escapes = map[byte]byte{'a': 7, 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t', 'v': '\v'}

// escape reads one escape after a backslash: \a \b \f \n \r \t \v, octal
// \NNN (at most \377), and any other character as itself.
func (lx *jaasLexer) escape(b *strings.Builder) {
	c := lx.s[lx.pos]
	if e, ok := escapes[c]; ok {
		b.WriteByte(e)
		lx.pos++
		return
	}
	if c < '0' || c > '7' {
		b.WriteByte(c)
		lx.pos++
		return
	}
	n, digits := 0, 0
	for lx.pos < len(lx.s) && digits < 3 && lx.s[lx.pos] >= '0' && lx.s[lx.pos] <= '7' && (digits < 2 || c <= '3') {
		n = n*8 + int(lx.s[lx.pos]-'0')
		lx.pos++
		digits++
	}
	b.WriteRune(rune(n))
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
