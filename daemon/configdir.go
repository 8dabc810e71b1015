package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/configs/syntax"
	"github.com/hdfs-sink/hdfs-sink/daemon/rest"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// errNotWritable refuses REST changes of connector files that could not
// survive a restart: a --config that is one file, or a directory the
// daemon cannot write.
var errNotWritable = errors.New("connector files cannot be changed here: --config must be a directory the daemon can write")

// writableDir returns the config directory if the daemon can change it;
// else a *rest.ForbiddenError.
func (d *Daemon) writableDir() (string, error) {
	st, err := os.Stat(d.files.Config)
	if err != nil || !st.IsDir() {
		return "", &rest.ForbiddenError{Err: errNotWritable}
	}
	f, err := os.CreateTemp(d.files.Config, ".hdfs-sink-probe-*.tmp")
	if err != nil {
		return "", &rest.ForbiddenError{Err: fmt.Errorf("%w: %v", errNotWritable, err)}
	}
	f.Close()
	os.Remove(f.Name())
	return d.files.Config, nil
}

// fileFor is where connector name lives: its own file if it came from the
// directory, else <dir>/<name>.json. A file that holds other connectors
// too (an export), or a new connector's <name>.json that holds another
// one, is a *rest.ForbiddenError: writing one connector there would delete
// the others.
func (d *Daemon) fileFor(dir, name string) (string, error) {
	file := filepath.Join(dir, name+".json")
	if s := d.supervisor(name); s != nil && filepath.Dir(s.config().Source) == filepath.Clean(dir) {
		file = s.config().Source
	}
	var others []string
	for _, s := range d.supervisors() {
		if s.name != name && s.config().Source == file {
			others = append(others, s.name)
		}
	}
	if len(others) > 0 {
		return "", &rest.ForbiddenError{Err: fmt.Errorf("connector %s would be written to %s, which also defines %s: "+
			"edit that file, or move %s to a file of its own", name, file, strings.Join(others, ", "), name)}
	}
	return file, nil
}

// staged is a connector file the REST API is about to write, checked as
// run would load it.
type staged struct {
	file    string
	data    []byte
	conn    *configs.Connector // as the daemon will run it: the worker under it
	created bool
}

// Put is PUT /connectors/<name>/config: body is the config map. It is
// staged (checked as run would load it, the worker under it, together
// with the other files), then written atomically and reloaded. created:
// the connector is new. A config that cannot be used is a
// *rest.ConfigError, a directory the daemon cannot write a
// *rest.ForbiddenError.
func (d *Daemon) Put(name string, body io.Reader) (c *configs.Connector, created bool, err error) {
	cfg, err := decodeConfig(body, name)
	if err != nil {
		return nil, false, &rest.ConfigError{Messages: []string{err.Error()}}
	}
	f, err := d.stage(name, cfg)
	if err != nil {
		return nil, false, err
	}
	if err := d.write(f); err != nil {
		return nil, false, err
	}
	return f.conn, f.created, nil
}

// stage makes connector name's file from cfg (a config map as a REST body
// gives it, changed in place) and checks it exactly as run would load it:
// with the worker file or CONNECT_* environment the daemon runs with, and
// with every other file of the directory. What GET …/config showed hidden
// (a literal secret as [hidden], a URL's credentials) and came back
// unchanged is the stored value again (wiring.RestoreHidden); a [hidden]
// left over is refused by configs. A connector from a .properties file
// stays one. Every REST route that writes a connector file (PUT …/config,
// POST /connectors, PATCH …/config) goes through stage, then write.
func (d *Daemon) stage(name string, cfg map[string]any) (*staged, error) {
	dir, err := d.writableDir()
	if err != nil {
		return nil, err
	}
	if !safeName(name) {
		return nil, &rest.ConfigError{Messages: []string{fmt.Sprintf("connector name %q cannot be a file name", name)}}
	}
	file, err := d.fileFor(dir, name)
	if err != nil {
		return nil, err
	}
	s := d.supervisor(name)
	if s != nil {
		if keys := wiring.RestoreHidden(d.board.redactor(), s.config().Written, cfg); len(keys) > 0 {
			d.log.Info("REST config change: values shown hidden came back unchanged; the stored ones are kept", "connector", name, "keys", keys)
		}
	}
	data, err := encodeConnector(file, name, cfg)
	if err != nil {
		return nil, &rest.ConfigError{Messages: []string{err.Error()}}
	}
	c, refused := d.checkWithOthers(dir, file, name, data)
	if refused != nil {
		return nil, &rest.ConfigError{Messages: refused}
	}
	return &staged{file: file, data: data, conn: c, created: s == nil}, nil
}

// write puts a staged file in place atomically and reloads.
func (d *Daemon) write(f *staged) error {
	if err := writeAtomic(f.file, f.data); err != nil {
		return err
	}
	d.log.Info("connector file written through the REST API; reloading", "connector", f.conn.Name, "file", f.file)
	d.reloadNow()
	return nil
}

func safeName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `/\`) && !strings.HasPrefix(name, ".")
}

// decodeConfig reads a config map for connector name: a JSON object whose
// "name", if any, is name. Numbers keep their text.
func decodeConfig(body io.Reader, name string) (map[string]any, error) {
	var cfg map[string]any
	dec := json.NewDecoder(io.LimitReader(body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(&cfg); err != nil || cfg == nil {
		return nil, fmt.Errorf("the body must be a JSON object of config keys: %v", err)
	}
	if n, ok := cfg["name"]; ok && n != name {
		return nil, fmt.Errorf("the config's name %v is not the connector's name %s", n, name)
	}
	cfg["name"] = name
	return cfg, nil
}

// encodeConnector is connector name's file: {"name", "config"} JSON, or
// key=value lines for a .properties file (a connector defined in one is
// written back in its own format, where it was).
func encodeConnector(file, name string, cfg map[string]any) ([]byte, error) {
	if !strings.EqualFold(filepath.Ext(file), ".properties") {
		data, err := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
		return append(data, '\n'), err
	}
	props := make(map[string]string, len(cfg))
	for k, v := range cfg {
		switch v := v.(type) {
		case string:
			props[k] = v
		case json.Number:
			props[k] = v.String()
		case bool:
			props[k] = strconv.FormatBool(v)
		default:
			return nil, fmt.Errorf("%s: the connector is a .properties file, whose values are strings, numbers or booleans, not JSON objects, lists or null", k)
		}
	}
	header := []string{"Connector " + name + ", written by hdfs-sink's REST API; comments of the previous file are not kept."}
	return syntax.FormatProperties(header, props), nil
}

// checkWithOthers checks the candidate file of connector name with every
// other file of dir and the daemon's worker, exactly as a reload would
// load them (two connectors writing one directory, duplicate names, what
// the wiring refuses), on a copy of the directory: configs checks files,
// and the real directory must not hold a bad file even for a moment. It
// returns the connector as it will run (its Source the real file), or the
// errors, redacted.
func (d *Daemon) checkWithOthers(dir, target, name string, data []byte) (*configs.Connector, []string) {
	tmp, err := os.MkdirTemp("", "hdfs-sink-check-")
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer os.RemoveAll(tmp)
	files, _ := connectorFiles(dir)
	for _, f := range files {
		if f == target {
			continue
		}
		if err := copyFile(f, filepath.Join(tmp, filepath.Base(f))); err != nil {
			return nil, []string{err.Error()}
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, filepath.Base(target)), data, 0o600); err != nil {
		return nil, []string{err.Error()}
	}
	l, err := wiring.LoadChecked(wiring.Files{Config: tmp, Worker: d.files.Worker}, slog.New(slog.DiscardHandler))
	if err != nil {
		msgs := wiring.RedactedErrors(d.board.redactor(), err)
		for i := range msgs {
			msgs[i] = strings.ReplaceAll(msgs[i], tmp, filepath.Clean(dir))
		}
		return nil, msgs
	}
	for _, c := range l.Conns {
		if c.Name == name {
			c.Source = target
			return c, nil
		}
	}
	return nil, []string{fmt.Sprintf("%s does not define connector %s", target, name)}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o600)
}

// Delete is DELETE /connectors/<name>: its file is removed and the daemon
// reloads, which stops the connector gracefully. A file the daemon may not
// remove is a *rest.ForbiddenError.
func (d *Daemon) Delete(name string) error {
	s := d.supervisor(name)
	if s == nil {
		return rest.ErrNotFound
	}
	dir, err := d.writableDir()
	if err != nil {
		return err
	}
	file := s.config().Source
	if filepath.Dir(file) != filepath.Clean(dir) {
		return &rest.ForbiddenError{Err: fmt.Errorf("connector %s comes from %s, outside %s", s.name, file, dir)}
	}
	if err := os.Remove(file); err != nil {
		return err
	}
	syncDir(dir)
	d.log.Info("connector file deleted through the REST API; reloading", "connector", s.name, "file", file)
	d.reloadNow()
	return nil
}

// writeAtomic replaces file with data: written to a temp file beside it,
// synced, renamed over it, and the directory synced, so that a crash
// leaves the old file or the new one, never a torn one. A new file is
// 0600: connector files hold credentials.
func writeAtomic(file string, data []byte) error {
	mode := os.FileMode(0o600)
	if st, err := os.Stat(file); err == nil {
		mode = st.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename: nothing there
	if _, err = tmp.Write(data); err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), mode)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", file, err)
	}
	syncDir(filepath.Dir(file))
	return nil
}

// syncDir makes a rename or remove in dir durable; a failure only loses
// durability across a power cut, which the next write fixes.
func syncDir(dir string) {
	if f, err := os.Open(dir); err == nil {
		f.Sync()
		f.Close()
	}
}
