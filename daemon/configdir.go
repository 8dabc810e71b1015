package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// errNotWritable refuses REST changes of connector files that could not
// survive a restart: a --config that is one file, or a directory the
// daemon cannot write.
var errNotWritable = errors.New("connector files cannot be changed here: --config must be a directory the daemon can write")

// writableDir returns the config directory if the daemon can change it.
func (d *daemon) writableDir() (string, error) {
	st, err := os.Stat(d.cf.config)
	if err != nil || !st.IsDir() {
		return "", errNotWritable
	}
	f, err := os.CreateTemp(d.cf.config, ".hdfs-sink-probe-*.tmp")
	if err != nil {
		return "", fmt.Errorf("%w: %v", errNotWritable, err)
	}
	f.Close()
	os.Remove(f.Name())
	return d.cf.config, nil
}

// fileFor is where connector name lives: its own file if it came from the
// directory, else <dir>/<name>.json.
func (d *daemon) fileFor(dir, name string) string {
	if s := d.supervisor(name); s != nil && filepath.Dir(s.config().Source) == filepath.Clean(dir) {
		return s.config().Source
	}
	return filepath.Join(dir, name+".json")
}

// putConfig is PUT /connectors/<name>/config: the body is the config map.
// The file is checked as run checks it, together with the other files,
// then written atomically and reloaded: 201 for a new connector, 200 for
// a changed one.
func (a *restAPI) putConfig(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	dir, err := a.d.writableDir()
	if err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	if !safeName(name) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("connector name %q cannot be a file name", name))
		return
	}
	file := a.d.fileFor(dir, name)
	data, c, err := a.candidate(r.Body, name)
	refused := redactedErrors(a.d.board.redactor(), err)
	if err == nil {
		refused = a.d.checkWithOthers(dir, file, data)
	}
	if refused != nil {
		writeError(w, http.StatusBadRequest, strings.Join(refused, "\n"))
		return
	}
	existed := a.d.supervisor(name) != nil
	if err := writeAtomic(file, data); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	a.log.Info("connector file written through the REST API; reloading", "connector", name)
	a.d.reloadNow()
	code := http.StatusCreated
	if existed {
		code = http.StatusOK
	}
	writeJSON(w, code, infoOf(configs.NewRedactor(a.d.board.loadedWorker(), c), c))
}

func safeName(name string) bool {
	return name != "" && !strings.ContainsAny(name, `/\`) && !strings.HasPrefix(name, ".")
}

// candidate decodes a config map and parses it as connector name's file.
func (a *restAPI) candidate(body io.Reader, name string) ([]byte, *configs.Connector, error) {
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
	c, _, err := configs.Parse(name+".json", data)
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
func (d *daemon) checkWithOthers(dir, target string, data []byte) []string {
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
	_, err = loadChecked(configFlags{config: tmp, worker: d.cf.worker}, slog.New(slog.DiscardHandler))
	msgs := redactedErrors(d.board.redactor(), err)
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

// deleteConnector is DELETE /connectors/<name>: its file is removed and the
// daemon reloads, which stops the connector gracefully.
func (a *restAPI) deleteConnector(w http.ResponseWriter, _ *http.Request, s *supervisor) {
	dir, err := a.d.writableDir()
	if err != nil {
		writeError(w, http.StatusForbidden, err.Error())
		return
	}
	file := s.config().Source
	if filepath.Dir(file) != filepath.Clean(dir) {
		writeError(w, http.StatusForbidden, fmt.Sprintf("connector %s comes from %s, outside %s", s.name, file, dir))
		return
	}
	if err := os.Remove(file); err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	syncDir(dir)
	a.log.Info("connector file deleted through the REST API; reloading", "connector", s.name, "file", file)
	a.d.reloadNow()
	w.WriteHeader(http.StatusNoContent)
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
