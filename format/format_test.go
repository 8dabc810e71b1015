package format

import (
	"errors"
	"io"
	"testing"

	"github.com/hdfs-sink/hdfs-sink/schema"
)

type nopWriter struct{}

func (*nopWriter) WriteDatum([]byte) error { return nil }
func (*nopWriter) Flush() error            { return nil }
func (*nopWriter) BytesBuffered() int      { return 0 }
func (*nopWriter) Close() error            { return nil }

// seven are options that are valid only when they are 7.
type seven int

func (s seven) Validate() error {
	if s != 7 {
		return errors.New("not seven")
	}
	return nil
}

// TestDefineChecksOptions: invalid options make no Format.
func TestDefineChecksOptions(t *testing.T) {
	f, err := Define("nop", ".nop", seven(6), func(io.Writer, *schema.Schema, seven) (*nopWriter, error) { return &nopWriter{}, nil })
	if err == nil || f != nil {
		t.Fatalf("Define with invalid options = %v, %v", f, err)
	}
}

// TestDefineReturnsANilInterfaceOnError: a constructor's typed nil must not
// reach callers as a non-nil RecordWriter.
func TestDefineReturnsANilInterfaceOnError(t *testing.T) {
	boom := errors.New("boom")
	f, err := Define("nop", ".nop", seven(7), func(_ io.Writer, _ *schema.Schema, opts seven) (*nopWriter, error) {
		if opts != 7 {
			t.Fatalf("options %d, want 7", opts)
		}
		return nil, boom
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.Name() != "nop" || f.Extension() != ".nop" {
		t.Fatalf("name %q, extension %q", f.Name(), f.Extension())
	}
	w, err := f.NewWriter(io.Discard, nil)
	if !errors.Is(err, boom) || w != nil {
		t.Fatalf("NewWriter = %v, %v; want a nil interface and the error", w, err)
	}
}

// TestValueErrorText: the message the encoders' value errors always had.
func TestValueErrorText(t *testing.T) {
	err := error(&ValueError{Path: "a.b", Msg: "int64 is not a string value"})
	if got := err.Error(); got != "field a.b: int64 is not a string value" {
		t.Fatalf("Error() = %q", got)
	}
}
