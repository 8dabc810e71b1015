package daemon

import (
	"fmt"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// publishedConfig parses a connector config published over REST (PUT,
// POST, PATCH) as run parses the files: with the worker's settings under
// it (bootstrap.servers, converters, CONNECT_*), so that a config relying
// on the worker, as Connect configs do, is not refused for a key the
// worker sets. (A minimal stand-in written with issue 22's routes; the
// part of issue 22 that owns PUT writes the one to keep.)
func (d *Daemon) publishedConfig(source string, data []byte) (*configs.Connector, error) {
	conns, _, err := configs.ParseFile(source, data, d.board.loadedWorker())
	if err != nil {
		return nil, err
	}
	if len(conns) != 1 {
		return nil, &configs.FileError{Source: source, Err: fmt.Errorf("holds %d connectors, want 1", len(conns))}
	}
	return conns[0], nil
}
