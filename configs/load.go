package configs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs/provider"
	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
)

// Load loads one connector file, or every *.json and *.properties file of
// a directory (sorted by name, not recursive), with the worker's settings
// under each connector's (w may be nil). Errors of all files are returned
// together; on any error no connector is returned. Two files with one
// connector name are an error naming both.
func Load(p string, w *Worker) ([]*Connector, []Warning, error) {
	files, err := connectorFiles(p)
	if err != nil {
		return nil, nil, err
	}
	var (
		conns []*Connector
		warns []Warning
		errs  []error
		seen  = map[string]string{}
	)
	for _, f := range files {
		cs, ws, err := loadFile(f, w)
		warns = append(warns, ws...)
		if err != nil {
			errs = append(errs, err)
		}
		for _, c := range cs {
			if first, dup := seen[c.Name]; dup {
				errs = append(errs, &DuplicateNameError{Name: c.Name, First: first, Second: f})
				continue
			}
			seen[c.Name] = f
			conns = append(conns, c)
		}
	}
	errs = append(errs, checkOverlaps(conns)...)
	if len(errs) > 0 {
		return nil, warns, errors.Join(errs...)
	}
	return conns, warns, nil
}

func loadFile(f string, w *Worker) ([]*Connector, []Warning, error) {
	data, err := syntax.ReadFile(f)
	if err != nil {
		return nil, nil, &FileError{Source: f, Err: err}
	}
	return ParseFile(f, data, w)
}

// ConnectorFiles lists the files Load reads from p: p itself, or the
// *.json and *.properties files of the directory p, sorted by name, not
// recursive. Hidden files and what editors leave beside a file they edit
// (Emacs' .#x.json lock and #x.json# autosave, x.json~ backups, Vim's
// .x.json.swp) are never connector files; skipped lists them (for a debug
// line), so that an open editor does not break loading or a reload.
func ConnectorFiles(p string) (files, skipped []string, err error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, nil, fmt.Errorf("load connector config: %w", err)
	}
	if !st.IsDir() {
		return []string{p}, nil, nil
	}
	entries, err := os.ReadDir(p) // sorted by name
	if err != nil {
		return nil, nil, fmt.Errorf("load connector config: %w", err)
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case isEditorFile(name):
			skipped = append(skipped, filepath.Join(p, name))
		case !e.IsDir() && isConnectorFile(name):
			files = append(files, filepath.Join(p, name))
		}
	}
	return files, skipped, nil
}

func connectorFiles(p string) ([]string, error) {
	files, _, err := ConnectorFiles(p)
	if err == nil && len(files) == 0 {
		return nil, &FileError{Source: p, Err: errors.New("no *.json or *.properties connector files in directory")}
	}
	return files, err
}

// isEditorFile reports hidden files (dotfiles, Emacs' .#name locks, Vim's
// .name.swp, the temp files hdfs-sink writes before a rename) and editors'
// backups and autosaves (name~, #name#).
func isEditorFile(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, "~") ||
		(len(name) > 1 && strings.HasPrefix(name, "#") && strings.HasSuffix(name, "#"))
}

// IsConnectorFile reports whether Load reads a file of this name from a
// directory (ConnectorFiles): the daemon watches and copies the same files.
func IsConnectorFile(name string) bool { return !isEditorFile(name) && isConnectorFile(name) }

func isConnectorFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	return ext == ".json" || ext == ".properties"
}

// Parse reads a file holding one connector, without a worker. source
// names the file in messages.
func Parse(source string, data []byte) (*Connector, []Warning, error) {
	conns, warns, err := ParseFile(source, data, nil)
	if err != nil {
		return nil, warns, err
	}
	if len(conns) != 1 {
		return nil, warns, &FileError{Source: source, Err: fmt.Errorf("holds %d connectors, want 1", len(conns))}
	}
	return conns[0], warns, nil
}

// ParseFile reads every connector of one file (an export holds several)
// with the worker's settings under them (w may be nil). It returns all
// errors of the file at once: *SyntaxError when the file cannot be read as
// connectors, else *FieldError and *ResolveError per setting.
func ParseFile(source string, data []byte, w *Worker) ([]*Connector, []Warning, error) {
	rcs, warns, err := splitConnectors(source, data)
	if err != nil && len(rcs) == 0 {
		return nil, warns, err
	}
	errs := flatten(err)
	var conns []*Connector
	for _, rc := range rcs {
		c, ws, err := buildConnector(source, rc, w)
		warns = append(warns, ws...)
		errs = append(errs, flatten(err)...)
		if err == nil {
			conns = append(conns, c)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, warns, err
	}
	return conns, warns, nil
}

// buildConnector resolves a connector's placeholders, puts its settings
// over the worker's, and reads and validates every key.
func buildConnector(source string, rc rawConnector, w *Worker) (*Connector, []Warning, error) {
	own, rerrs := resolveOwn(source, rc, w)
	eff, mergeWarns := effective(own, w)
	p := &parser{name: rc.name, source: source, set: eff, raw: eff.values(), own: rc.raw, errs: rerrs, w: w}
	if !rc.nameOK {
		p.missing("name", "must be the connector name (top-level \"name\", or \"name\" inside the config)")
	}
	c := p.build()
	c.Written = writtenConfig(rc.name, rc.raw)
	p.validate(c)
	p.refuseHidden(own)
	if w != nil {
		p.checkOverridePolicy(w.OverridePolicy)
	}
	warns := append(rc.warns, mergeWarns...)
	warns = append(warns, keyWarnings(rc.raw)...)
	warns = append(warns, p.warns...)
	for i := range warns {
		warns[i].Connector = rc.name
	}
	// Map iteration fed some warnings: sort so output is reproducible.
	sort.SliceStable(warns, func(i, j int) bool { return warns[i].Key < warns[j].Key })
	if len(p.errs) > 0 {
		return nil, warns, errors.Join(p.errs...)
	}
	return c, warns, nil
}

// resolveOwn replaces the connector's config provider placeholders with
// the worker's providers. A connector file may not declare providers of
// its own: Kafka Connect honours only the worker's, and a connector's own
// FileConfigProvider would read any file the daemon can, past the
// worker's allowed.paths (and a REST body could then send it to a server
// the same body names).
func resolveOwn(source string, rc rawConnector, w *Worker) (settings, []error) {
	var errs []error
	own := settings{}
	for _, k := range sortedKeys(rc.raw) {
		st := setting{value: rc.raw[k]}
		if provider.IsKey(k) {
			errs = append(errs, connectorProviderError(rc.name, source, k, rc.raw[k]))
			own[k] = st
			continue
		}
		v, unresolved, err := w.resolve(rc.raw[k])
		if err != nil {
			errs = append(errs, &ResolveError{Connector: rc.name, Source: source, Key: k, Err: err})
		}
		st.value, st.unresolved = v, unresolved
		own[k] = st
	}
	return own, errs
}

func connectorProviderError(name, source, key, value string) error {
	return &FieldError{Connector: name, Source: source, Key: key, Value: value, Set: true, Err: ErrConnectorProviders,
		Reason: "config providers are the worker's: Kafka Connect honours only those of the worker file (or CONNECT_CONFIG_PROVIDERS*), whose allowed.paths bound what a placeholder may read; declare it there"}
}

// flatten lists the errors of an errors.Join, so that joining again keeps
// one error per line and per problem.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

func connectorErr(name, source string, err error) error {
	var fe *FieldError
	if errors.As(err, &fe) {
		fe.Connector, fe.Source = name, source
		return fe
	}
	return err
}
