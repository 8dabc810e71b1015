package daemon

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"reflect"
	"time"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/internal/wiring"
)

// forwardReloads turns SIGHUP and changes in the config directory (checked
// every watchEvery) into reloads, until ctx ends. Changes are against
// d.loaded, the files as they were just before run loaded them: a file
// written meanwhile is a change too. (Zero: the first check reloads, which
// changes nothing if nothing changed.)
func (d *Daemon) forwardReloads(ctx context.Context, hup <-chan os.Signal) {
	var tick <-chan time.Time
	if d.watchEvery > 0 {
		t := time.NewTicker(d.watchEvery)
		defer t.Stop()
		tick = t.C
	}
	last := d.loaded
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			d.log.Info("SIGHUP: reloading connector files", "config", d.files.Config)
			last = configFingerprint(d.files.Config)
			d.reloadNow()
		case <-tick:
			if fp := configFingerprint(d.files.Config); fp != last {
				d.log.Info("connector files changed: reloading", "config", d.files.Config)
				last = fp
				d.reloadNow()
			}
		}
	}
}

// reloadNow asks the daemon's loop to reload (at most one waits).
func (d *Daemon) reloadNow() {
	select {
	case d.reloads <- struct{}{}:
	default:
	}
}

// configFingerprint digests the names and contents of the files a reload
// would read; an unreadable path digests to its error.
func configFingerprint(path string) [32]byte {
	h := sha256.New()
	files, err := connectorFiles(path)
	if err != nil {
		h.Write([]byte(err.Error()))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			b = []byte(err.Error())
		}
		h.Write([]byte(f + "\x00"))
		h.Write(b)
	}
	var out [32]byte
	copy(out[:], h.Sum(nil))
	return out
}

// connectorFiles are the files a reload reads (configs.ConnectorFiles:
// the *.json and *.properties files of the directory, without hidden and
// editor files), or the file itself.
func connectorFiles(path string) ([]string, error) {
	files, _, err := configs.ConnectorFiles(path)
	if err != nil {
		return []string{path}, err
	}
	return files, nil
}

// reload reads the connector files again and applies the difference:
// added connectors start, removed ones stop gracefully (commit, leave the
// group), changed ones restart with their new file, unchanged ones are not
// touched. A reload with any invalid file changes nothing.
func (d *Daemon) reload(ctx context.Context, old []*configs.Connector, ended chan<- struct{}) []*configs.Connector {
	conns, err := d.loadForReload()
	if err != nil {
		d.log.Error("reload refused: the connector files are invalid; nothing changed", "err", err)
		return old
	}
	if d.limitMemory != nil {
		d.limitMemory(conns)
	}
	next := map[string]*configs.Connector{}
	for _, c := range conns {
		next[c.Name] = c
	}
	for _, c := range old {
		if _, kept := next[c.Name]; !kept {
			d.removeConnector(ctx, c.Name)
		}
	}
	for _, c := range conns {
		d.applyConnector(ctx, c, ended)
	}
	return conns
}

// loadForReload loads like run, except that a directory left without any
// connector file means no connectors (the REST API deleted the last one).
func (d *Daemon) loadForReload() ([]*configs.Connector, error) {
	if files, err := connectorFiles(d.files.Config); err == nil && len(files) == 0 {
		return nil, nil
	}
	l, err := wiring.LoadChecked(d.files, d.log)
	if err != nil {
		return nil, errors.New(l.Redact.Text(err.Error()))
	}
	d.board.setLoaded(l) // the reloaded files may bring new secrets
	if d.hide != nil {
		d.hide(l.Redact)
	}
	return l.Conns, nil
}

func (d *Daemon) applyConnector(ctx context.Context, c *configs.Connector, ended chan<- struct{}) {
	s := d.supervisor(c.Name)
	switch {
	case s == nil:
		d.log.Info("reload: connector added; starting it", "connector", c.Name)
		d.startSupervisor(ctx, c, ended)
	case reflect.DeepEqual(s.config().Raw, c.Raw):
	case s.gaveUp() != nil:
		d.log.Info("reload: failed connector changed; starting it again", "connector", c.Name)
		d.revive(c, s.targetState())
	default:
		d.log.Info("reload: connector changed; restarting it", "connector", c.Name)
		s.requestRestart(c)
	}
}

// removeConnector stops a connector for good and waits for it (its
// partitions commit and it leaves its group), shutdownBound at most.
func (d *Daemon) removeConnector(ctx context.Context, name string) {
	s := d.supervisor(name)
	if s == nil {
		return
	}
	d.log.Info("reload: connector removed; stopping it", "connector", name)
	s.stop()
	select {
	case <-s.done:
	case <-time.After(shutdownBound([]*configs.Connector{s.config()})):
		d.log.Warn("removed connector still stopping; leaving it to finish", "connector", name)
	case <-ctx.Done():
	}
	d.mu.Lock()
	delete(d.sups, name)
	d.mu.Unlock()
	d.board.remove(name)
	d.metrics.ForgetConnector(name)
}
