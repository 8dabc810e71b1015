//go:build !faults

package daemon

import (
	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// A release build has no fault injection: the environment switches of
// faults.go (a panic in a connector, refused or frozen renames) exist only in builds
// with the `faults` tag, as the integration tests build the daemon.

// connectorFaults is the process's fault injection, the same for every
// connector.
type connectorFaults struct {
	process sink.Faults
}

func (d *connectorFaults) of(string) (sink.Faults, error) { return d.process, nil }

func renameFaultsFromEnv() (int64, error) { return 0, nil }

func failRenames(open func(*configs.Connector) (storage.FS, error), _ int64) func(*configs.Connector) (storage.FS, error) {
	return open
}

type renameFreeze struct{}

func freezeRenameFromEnv() (*renameFreeze, error) { return nil, nil }

func freezeRenames(open func(*configs.Connector) (storage.FS, error), _ *renameFreeze) func(*configs.Connector) (storage.FS, error) {
	return open
}
