package rest

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
)

// fakeOps is what the fake answers for Operations and what it was given.
type fakeOps struct {
	offsets   []PartitionOffset // what Offsets answers
	altered   []PartitionOffset // what AlterOffsets was given
	body      string            // the config Create read
	patch     map[string]*string
	change    func(name string) (*configs.Connector, error) // what Create and Patch answer
	health    Health                                        // zero: healthy
	clusterID string
	levels    map[string]string // logger → level; nil: root INFO and connector.orders DEBUG
}

func (f *fakeConnectors) Stop(name string) error { return f.do("stop", name) }

func (f *fakeConnectors) Create(name string, config io.Reader, initial string) (*configs.Connector, error) {
	b, _ := io.ReadAll(config)
	f.mu.Lock()
	f.body = string(b)
	f.calls = append(f.calls, "create "+name+" "+initial)
	f.mu.Unlock()
	return f.change(name)
}

func (f *fakeConnectors) Patch(name string, patch map[string]*string) (*configs.Connector, error) {
	if err := f.do("patch", name); err != nil {
		return nil, err
	}
	f.mu.Lock()
	f.patch = patch
	f.mu.Unlock()
	return f.change(name)
}

func (f *fakeConnectors) Offsets(_ context.Context, name string) ([]PartitionOffset, error) {
	if err := f.do("offsets", name); err != nil {
		return nil, err
	}
	return f.offsets, nil
}

func (f *fakeConnectors) AlterOffsets(_ context.Context, name string, offsets []PartitionOffset) error {
	if err := f.do("alter offsets", name); err != nil {
		return err
	}
	f.mu.Lock()
	f.altered = offsets
	f.mu.Unlock()
	return nil
}

func (f *fakeConnectors) ResetOffsets(_ context.Context, name string) error {
	return f.do("reset offsets", name)
}

func (f *fakeConnectors) Health(context.Context) Health {
	if f.health == (Health{}) {
		return Health{Status: Healthy, Message: "ok"}
	}
	return f.health
}

func (f *fakeConnectors) KafkaClusterID() string { return f.clusterID }

func (f *fakeConnectors) levelsLocked() map[string]string {
	if f.levels == nil {
		f.levels = map[string]string{"root": "INFO", "connector.orders": "DEBUG"}
	}
	return f.levels
}

func (f *fakeConnectors) Loggers() map[string]LoggerLevel {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string]LoggerLevel{}
	for n, l := range f.levelsLocked() {
		out[n] = LoggerLevel{Level: l}
	}
	return out
}

func (f *fakeConnectors) LoggerLevel(name string) (LoggerLevel, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	l, ok := f.levelsLocked()[name]
	return LoggerLevel{Level: l}, ok
}

// SetLoggerLevel knows the levels ERROR to TRACE, and "root" as every
// logger's ancestor.
func (f *fakeConnectors) SetLoggerLevel(name, level string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	level = strings.ToUpper(level)
	if !strings.Contains(" ERROR WARN INFO DEBUG TRACE ", " "+level+" ") {
		return nil, &LevelError{Level: level}
	}
	levels := f.levelsLocked()
	if _, ok := levels[name]; !ok {
		return nil, ErrNoLogger
	}
	var changed []string
	for n := range levels {
		if n == name || name == "root" {
			levels[n] = level
			changed = append(changed, n)
		}
	}
	sort.Strings(changed)
	f.calls = append(f.calls, fmt.Sprintf("set %s %s", name, level))
	return changed, nil
}
