package configs

import "fmt"

// FieldError is a bad or missing value of one key of one connector.
type FieldError struct {
	Connector string // "" when the connector has no name yet
	Source    string
	Key       string
	Value     string
	Set       bool   // false: the key is missing
	Reason    string // what is allowed or required
}

func (e *FieldError) Error() string {
	where := e.Source + ": "
	if e.Connector != "" {
		where = fmt.Sprintf("connector %q (%s): ", e.Connector, e.Source)
	}
	if !e.Set {
		return fmt.Sprintf("%s%s is not set: %s", where, e.Key, e.Reason)
	}
	return fmt.Sprintf("%s%s = %q: %s", where, e.Key, e.Value, e.Reason)
}

// FileError is a connector file that cannot be read or decoded at all.
type FileError struct {
	Source string
	Err    error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s: %v", e.Source, e.Err) }

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

// DuplicateNameError is two files defining the same connector name.
type DuplicateNameError struct {
	Name, First, Second string
}

func (e *DuplicateNameError) Error() string {
	return fmt.Sprintf("connector %q is defined twice: in %s and in %s", e.Name, e.First, e.Second)
}

// Warning is a problem that does not stop the connector: an unknown key, or
// a key that is accepted but ignored.
type Warning struct {
	Connector string
	Key       string
	Message   string
}

func (w Warning) String() string {
	return fmt.Sprintf("connector %q: %s: %s", w.Connector, w.Key, w.Message)
}
