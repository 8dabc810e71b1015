package main

import (
	"flag"
	"io"
	"time"

	"github.com/hdfs-sink/hdfs-sink/daemon"
)

// runFlags are the flags of `hdfs-sink run`.
type runFlags struct {
	cf          configFlags // --config, --worker
	http        httpFlags   // --listen, --read-only, --rest-*, --insecure-listen
	memMax      int64
	restart     daemon.RestartPolicy
	healthEvery time.Duration
	watchEvery  time.Duration
	log         logFlags
}

func (rf *runFlags) flagSet(stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rf.cf.register(fs) // a writable config directory lets the REST API add, change and delete connectors
	rf.http.register(fs)
	fs.Int64Var(&rf.memMax, "memory-max-bytes", 0, "memory ceiling for the whole process, shared by all connectors (0: the sum of their hdfs.sink.memory.max.bytes)")
	fs.DurationVar(&rf.restart.Initial, "restart-backoff", daemon.DefaultRestart.Initial, "wait before restarting a failed connector; doubles per failure in a row")
	fs.DurationVar(&rf.restart.Max, "restart-backoff-max", daemon.DefaultRestart.Max, "the longest wait between restarts")
	fs.IntVar(&rf.restart.Attempts, "restart-max-attempts", daemon.DefaultRestart.Attempts, "restarts in a row before a failed connector stays failed (-1: no limit; 0: never restart)")
	fs.DurationVar(&rf.healthEvery, "health-interval", 10*time.Second, "how often each connector checks Kafka, the registry and the store (readiness, lag)")
	fs.DurationVar(&rf.watchEvery, "watch-interval", 5*time.Second, "how often the config directory is checked for changes (0: only SIGHUP reloads)")
	rf.log.register(fs)
	return fs
}

func (rf *runFlags) restartPolicy() daemon.RestartPolicy {
	p := rf.restart
	p.Initial = max(p.Initial, 10*time.Millisecond)
	p.Max = max(p.Max, p.Initial)
	return p
}
