package configs

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LoadPath loads one connector file, or every *.json file of a directory
// (sorted by name, not recursive). Errors of all files are returned together;
// on any error no connector is returned. Two files with one connector name
// are an error naming both.
func LoadPath(p string) ([]*Connector, []Warning, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, nil, fmt.Errorf("load connector config: %w", err)
	}
	files := []string{p}
	if st.IsDir() {
		if files, err = jsonFiles(p); err != nil {
			return nil, nil, err
		}
	}
	var (
		conns []*Connector
		warns []Warning
		errs  []error
		seen  = map[string]string{}
	)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			errs = append(errs, &FileError{Source: f, Err: err})
			continue
		}
		c, w, err := Parse(f, data)
		warns = append(warns, w...)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if first, dup := seen[c.Name]; dup {
			errs = append(errs, &DuplicateNameError{Name: c.Name, First: first, Second: f})
			continue
		}
		seen[c.Name] = f
		conns = append(conns, c)
	}
	errs = append(errs, checkOverlaps(conns)...)
	if len(errs) > 0 {
		return nil, warns, errors.Join(errs...)
	}
	return conns, warns, nil
}

func jsonFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, fmt.Errorf("load connector config: %w", err)
	}
	var files []string
	for _, e := range entries {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".json") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) == 0 {
		return nil, &FileError{Source: dir, Err: errors.New("no *.json connector files in directory")}
	}
	return files, nil
}

// Parse reads one connector from data. source names the file in messages.
// It returns all errors of the file at once (errors.Join of *FieldError),
// or a *FileError when data is not a connector file at all.
func Parse(source string, data []byte) (*Connector, []Warning, error) {
	name, raw, shapeWarns, err := decode(source, data)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{name: name, source: source, raw: raw}
	if name == "" {
		p.missing("name", "must be the connector name (top-level \"name\", or \"name\" inside the config)")
	}
	c := p.build()
	p.validate(c)
	warns := append(shapeWarns, keyWarnings(raw)...)
	warns = append(warns, p.warns...)
	for i := range warns {
		warns[i].Connector = name
	}
	// Map iteration fed some warnings: sort so output is reproducible.
	sort.SliceStable(warns, func(i, j int) bool { return warns[i].Key < warns[j].Key })
	if len(p.errs) > 0 {
		return nil, warns, errors.Join(p.errs...)
	}
	return c, warns, nil
}

// decode accepts {"name": n, "config": {…}} (also with the "tasks" and
// "type" members of a Connect REST GET answer) or a flat config map holding
// "name". Values may be strings, numbers, booleans or lists of those (joined
// with ","); null means "not set".
func decode(source string, data []byte) (string, map[string]string, []Warning, error) {
	top, err := decodeObject(data)
	if err != nil {
		return "", nil, nil, &FileError{Source: source, Err: fmt.Errorf("not a JSON connector object: %w", err)}
	}
	cfg := top
	var warns []Warning
	if inner, ok := top["config"].(map[string]any); ok {
		cfg = inner
		for k := range top {
			if k != "name" && k != "config" && k != "tasks" && k != "type" {
				warns = append(warns, Warning{Key: k, Message: "top-level member ignored (only \"name\" and \"config\" are read)"})
			}
		}
	}
	raw := make(map[string]string, len(cfg))
	var errs []error
	for k, v := range cfg {
		s, ok, err := scalarString(v)
		if err != nil {
			errs = append(errs, &FileError{Source: source, Err: fmt.Errorf("%s: %w", k, err)})
		} else if ok {
			raw[k] = s
		}
	}
	name, err := connectorName(top, raw)
	if err != nil {
		errs = append(errs, &FileError{Source: source, Err: err})
	}
	if len(errs) > 0 {
		return "", nil, nil, errors.Join(errs...)
	}
	return name, raw, warns, nil
}

func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber() // keep "1000" and 1000 textually identical
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("the document must be a JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after the JSON object")
	}
	return top, nil
}

// connectorName takes the top-level name of the REST shape, else the config
// "name"; when both are present they must agree.
func connectorName(top map[string]any, raw map[string]string) (string, error) {
	inner := strings.TrimSpace(raw["name"])
	if _, rest := top["config"].(map[string]any); !rest {
		return inner, nil
	}
	outer, _ := top["name"].(string)
	outer = strings.TrimSpace(outer)
	switch {
	case outer == "":
		return inner, nil
	case inner != "" && inner != outer:
		return "", fmt.Errorf("name %q differs from config name %q", outer, inner)
	}
	return outer, nil
}

func scalarString(v any) (string, bool, error) {
	switch x := v.(type) {
	case nil:
		return "", false, nil
	case string:
		return x, true, nil
	case json.Number:
		return x.String(), true, nil
	case bool:
		if x {
			return "true", true, nil
		}
		return "false", true, nil
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			s, ok, err := scalarString(e)
			if _, nested := e.([]any); err != nil || nested || !ok {
				return "", false, errors.New("list elements must be strings, numbers or booleans")
			}
			parts = append(parts, s)
		}
		return strings.Join(parts, ","), true, nil
	default:
		return "", false, errors.New("value must be a string, number, boolean or list, not an object")
	}
}
