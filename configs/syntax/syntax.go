// Package syntax reads configuration files as text: a file of at most
// MaxFileBytes, and the two syntaxes connector, worker and provider files
// are written in, read strictly. JSON is one object whose keys keep their
// order and place (no key twice, nothing after it); Java's .properties is
// read as java.util.Properties does, and written back (FormatProperties).
// Either refuses bytes that are not UTF-8. What the keys mean is configs'.
package syntax

import (
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// Error is a file that is not well-formed JSON or properties, or breaks a
// rule of the file itself (a duplicate key, invalid UTF-8), at a line and
// column.
type Error struct {
	Source    string
	Line, Col int
	Msg       string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Source, e.Line, e.Col, e.Msg)
}

// MaxFileBytes bounds a connector, worker or provider file: hdfs-sink's
// own files are a few KiB, an export of a hundred connectors some hundred
// KiB, and reading a wrong path (a log, a data file) should fail fast.
const MaxFileBytes = 1 << 20

// ReadFile reads a file of at most MaxFileBytes.
func ReadFile(path string) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("larger than %d bytes (1 MiB), the most hdfs-sink reads from a configuration file", MaxFileBytes)
	}
	return data, nil
}

// checkUTF8 reports the line and column of the first byte that is not
// UTF-8: Go's JSON decoder would silently turn it into U+FFFD, and a
// password or path would then differ from what the file holds.
func checkUTF8(source string, data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	for off := 0; off < len(data); {
		r, size := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && size <= 1 {
			line, col := lineCol(data, off)
			return &Error{Source: source, Line: line, Col: col,
				Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x): the file must be UTF-8 encoded", data[off])}
		}
		off += size
	}
	return nil
}

const utf8BOM = "\xef\xbb\xbf"

// trimBOM drops a UTF-8 byte-order mark, which editors on Windows write.
func trimBOM(data []byte) []byte {
	return []byte(strings.TrimPrefix(string(data), utf8BOM))
}

// lineCol turns a byte offset into a 1-based line and column (in runes).
func lineCol(data []byte, off int) (line, col int) {
	off = min(off, len(data))
	before := data[:off]
	line = 1 + strings.Count(string(before), "\n")
	lastNL := strings.LastIndexByte(string(before), '\n')
	col = 1 + utf8.RuneCount(before[lastNL+1:])
	return line, col
}
