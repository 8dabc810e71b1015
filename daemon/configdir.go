package daemon

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
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
// directory, else <dir>/<name>.json.
func (d *Daemon) fileFor(dir, name string) string {
	if s := d.supervisor(name); s != nil && filepath.Dir(s.config().Source) == filepath.Clean(dir) {
		return s.config().Source
	}
	return filepath.Join(dir, name+".json")
}

// Put is PUT /connectors/<name>/config: body is the config map. The file
// is checked as run checks it, together with the other files, then written
// atomically and reloaded. created: the connector is new. A config that
// cannot be used is a *rest.ConfigError, a directory the daemon cannot
// write a *rest.ForbiddenError.
func (d *Daemon) Put(name string, body io.Reader) (c *configs.Connector, created bool, err error) {
	dir, err := d.writableDir()
	if err != nil {
		return nil, false, err
	}
	if !safeName(name) {
		return nil, false, &rest.ConfigError{Messages: []string{fmt.Sprintf("connector name %q cannot be a file name", name)}}
	}
	file := d.fileFor(dir, name)
	data, c, err := candidate(body, name, d.publishedConfig)
	refused := wiring.RedactedErrors(d.board.redactor(), err)
	if err == nil {
		refused = d.checkWithOthers(dir, file, data)
	}
	if refused != nil {
		return nil, false, &rest.ConfigError{Messages: refused}
	}
	existed := d.supervisor(name) != nil
	if err := writeAtomic(file, data); err != nil {
		return nil, false, err
	}
	d.log.Info("connector file written through the REST API; reloading", "connector", name)
	d.reloadNow()
	return c, !existed, nil
}

func safeName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `/\`) && !strings.HasPrefix(name, ".")
}

// candidate decodes a config map and parses it as connector name's file,
// with parse.
func candidate(body io.Reader, name string, parse func(string, []byte) (*configs.Connector, error)) ([]byte, *configs.Connector, error) {
	var cfg map[string]any
	if err := json.NewDecoder(io.LimitReader(body, 1<<20)).Decode(&cfg); err != nil {
		return nil, nil, fmt.Errorf("the body must be a JSON object of config keys: %v", err)
	}
	if n, ok := cfg["name"]; ok && n != name {
		return nil, nil, fmt.Errorf("the config's name %v is not the connector's name %s", n, name)
	}
	cfg["name"] = name
	data, err := json.MarshalIndent(map[string]any{"name": name, "config": cfg}, "", "  ")
	if err != nil {
		return nil, nil, err
	}
	c, err := parse(name+".json", data)
	if err != nil {
		return nil, nil, err
	}
	return append(data, '\n'), c, nil
}

// checkWithOthers checks the candidate file with every other file of dir,
// exactly as a reload would load them (two connectors writing one
// directory, duplicate names, what the wiring refuses), on a copy of the
// directory: configs checks files, and the real directory must not hold a
// bad file even for a moment. It returns the errors, redacted; nil: none.
func (d *Daemon) checkWithOthers(dir, target string, data []byte) []string {
	tmp, err := os.MkdirTemp("", "hdfs-sink-check-")
	if err != nil {
		return []string{err.Error()}
	}
	defer os.RemoveAll(tmp)
	files, _ := connectorFiles(dir)
	for _, f := range files {
		if f == target {
			continue
		}
		if err := copyFile(f, filepath.Join(tmp, filepath.Base(f))); err != nil {
			return []string{err.Error()}
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, filepath.Base(target)), data, 0o600); err != nil {
		return []string{err.Error()}
	}
	_, err = wiring.LoadChecked(wiring.Files{Config: tmp, Worker: d.files.Worker}, slog.New(slog.DiscardHandler))
	msgs := wiring.RedactedErrors(d.board.redactor(), err)
	for i := range msgs {
		msgs[i] = strings.ReplaceAll(msgs[i], tmp, filepath.Clean(dir))
	}
	return msgs
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
