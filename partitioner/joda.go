package partitioner

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// jodaToken is one piece of a Joda pattern: literal text, or a field letter
// repeated n times.
type jodaToken struct {
	lit   string
	field byte // 0 for a literal
	n     int
}

// jodaLayout is a compiled Joda-Time DateTimeFormat pattern. It is printed
// directly rather than translated to a Go layout: Go layouts cannot pad a
// year to five digits, and would read literals such as 'Monday' or '2006'
// as fields.
type jodaLayout []jodaToken

// jodaFields are the pattern letters Joda prints; any other letter is an
// error in Joda too ("Illegal pattern component").
const jodaFields = "GCYyxwEeDMdaKhHkmsSZz"

// compileJoda parses pattern as Joda's DateTimeFormat.forPattern does:
// runs of one letter are fields; text in single quotes and non-letters are
// literal; two single quotes are one quote, inside or outside quotes.
func compileJoda(pattern string) (jodaLayout, error) {
	var l jodaLayout
	for i := 0; i < len(pattern); {
		c := pattern[i]
		if !isLetter(c) {
			lit, next := jodaLiteral(pattern, i)
			l, i = append(l, jodaToken{lit: lit}), next
			continue
		}
		j := i
		for j < len(pattern) && pattern[j] == c {
			j++
		}
		if !strings.ContainsRune(jodaFields, rune(c)) {
			return nil, fmt.Errorf("illegal pattern component %q", pattern[i:j])
		}
		l, i = append(l, jodaToken{field: c, n: j - i}), j
	}
	return l, nil
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// jodaLiteral reads literal text from i up to the next unquoted letter. As
// in Joda, an unterminated quote runs to the end of the pattern.
func jodaLiteral(p string, i int) (string, int) {
	var b strings.Builder
	quoted := false
	for ; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '\'' && i+1 < len(p) && p[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == '\'':
			quoted = !quoted
		case !quoted && isLetter(c):
			return b.String(), i
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), i
}

// hasText reports whether printing needs month or day names, or era or
// AM/PM markers, which depend on the locale.
func (l jodaLayout) hasText() bool {
	for _, t := range l {
		switch {
		case t.field == 'G', t.field == 'E', t.field == 'a', t.field == 'M' && t.n >= 3:
			return true
		}
	}
	return false
}

// format prints t (already in the wanted location) with English names.
func (l jodaLayout) format(t time.Time) string {
	var b strings.Builder
	for _, tok := range l {
		if tok.field == 0 {
			b.WriteString(tok.lit)
			continue
		}
		b.WriteString(tok.print(t))
	}
	return b.String()
}

func (tok jodaToken) print(t time.Time) string {
	n := tok.n
	switch tok.field {
	case 'y':
		return year(t.Year(), n)
	case 'Y': // year of era, not Java's week year: Joda's week year is 'x'
		return year(yearOfEra(t.Year()), n)
	case 'x':
		wy, _ := t.ISOWeek()
		return year(wy, n)
	case 'C':
		return pad(yearOfEra(t.Year())/100, n)
	case 'w':
		_, w := t.ISOWeek()
		return pad(w, n)
	case 'e':
		return pad((int(t.Weekday())+6)%7+1, n)
	case 'D':
		return pad(t.YearDay(), n)
	case 'M':
		return month(t.Month(), n)
	case 'd':
		return pad(t.Day(), n)
	case 'H':
		return pad(t.Hour(), n)
	case 'k':
		return pad((t.Hour()+23)%24+1, n)
	case 'K':
		return pad(t.Hour()%12, n)
	case 'h':
		return pad((t.Hour()+11)%12+1, n)
	case 'm':
		return pad(t.Minute(), n)
	case 's':
		return pad(t.Second(), n)
	}
	return tok.printText(t)
}

func (tok jodaToken) printText(t time.Time) string {
	n := tok.n
	switch tok.field {
	case 'S':
		return fmt.Sprintf("%09d", t.Nanosecond())[:min(n, 9)] + strings.Repeat("0", max(n-9, 0))
	case 'E':
		if n >= 4 {
			return t.Weekday().String()
		}
		return t.Weekday().String()[:3]
	case 'a':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'G':
		if t.Year() <= 0 {
			return "BC"
		}
		return "AD"
	case 'z':
		name, _ := t.Zone()
		return name
	}
	return offset(t, n)
}

// offset prints Joda's Z (+0100), ZZ (+01:00) and ZZZ (zone id). Joda
// prints a zero offset as "Z".
func offset(t time.Time, n int) string {
	if n >= 3 {
		return t.Location().String()
	}
	_, off := t.Zone()
	if off == 0 {
		return "Z"
	}
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	sep := ""
	if n == 2 {
		sep = ":"
	}
	return sign + pad(off/3600, 2) + sep + pad(off%3600/60, 2)
}

// year prints y padded to n digits; two letters print the last two digits,
// as Joda's two-digit year does.
func year(y, n int) string {
	if n == 2 {
		if y < 0 {
			y = -y
		}
		return pad(y%100, 2)
	}
	return pad(y, n)
}

// yearOfEra is the year counted from 1 in either era (year 0 is 1 BC).
func yearOfEra(y int) int {
	if y <= 0 {
		return 1 - y
	}
	return y
}

func month(m time.Month, n int) string {
	switch {
	case n >= 4:
		return m.String()
	case n == 3:
		return m.String()[:3]
	}
	return pad(int(m), n)
}

// pad prints v with at least n digits, the sign in front, as Joda's
// FormatUtils.appendPaddedInteger does.
func pad(v, n int) string {
	s := strconv.Itoa(v)
	neg := v < 0
	if neg {
		s = s[1:]
	}
	if len(s) < n {
		s = strings.Repeat("0", n-len(s)) + s
	}
	if neg {
		return "-" + s
	}
	return s
}
