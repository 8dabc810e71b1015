package chaos

import (
	"context"
	"fmt"
	"path"
	"strings"
	"syscall"
	"time"
)

// Fault is one failure of a service around hdfs-sink: Inject starts it,
// Heal ends it and returns once the service serves again (the moment
// recovery is measured from).
type Fault struct {
	Name string
	What string
	// Needs are the actions the fault performs; without them it is not run.
	Needs []string
	// Net faults need the daemon in its own network namespace.
	Net bool
	// Hive faults hit only the metastore, which is off the write path:
	// recovery is the metastore work being done, not HDFS catching up.
	Hive bool
	// Quiet faults slow a service without failing it: the daemon falls
	// behind and catches up, and need not report anything meanwhile.
	Quiet bool
	// HA faults run against the HA nameservice (Config.HA): the connector
	// writes to hdfs://<nameservice>, and the checks read through it.
	HA bool
	// Env is added to the daemon's environment (a fault-injection switch
	// of a build with the faults tag).
	Env []string
	// Rate is the records per second of this fault's traffic
	// (Options.Rate when 0).
	Rate int
	// Hold is how long the fault lasts at least (Options.Hold when 0;
	// negative: not at all, the fault is over when Inject returns).
	Hold   time.Duration
	Inject func(ctx context.Context, r *faultRun) error
	// Heal ends the fault; nil: nothing to undo.
	Heal func(ctx context.Context, r *faultRun) error
	// Restore, if set, runs once the daemon has recovered: it puts back
	// what the fault took away but the daemon does not need to recover
	// (a killed standby-to-be started again), ready for the next fault.
	Restore func(ctx context.Context, r *faultRun) error
}

// actionTimeout bounds one action (a start waits for the service to serve).
const actionTimeout = 5 * time.Minute

func (r *faultRun) do(ctx context.Context, a string, args ...string) error {
	_, err := r.ctl.Do(ctx, actionTimeout, a, args...)
	return err
}

// signalFault is kill/stop of a service, healed by start/cont.
func signalFault(svc, verb, heal, what string, hold time.Duration) Fault {
	return Fault{
		Name: svc + "-" + map[string]string{"kill": "sigkill", "stop": "sigstop"}[verb], What: what,
		Needs: []string{svc + "." + verb, svc + "." + heal}, Hive: svc == "hms", Hold: hold,
		Inject: func(ctx context.Context, r *faultRun) error { return r.do(ctx, svc+"."+verb) },
		Heal:   func(ctx context.Context, r *faultRun) error { return r.do(ctx, svc+"."+heal) },
	}
}

// partitionFault cuts the daemon off from one service. An HDFS partition
// lasts past hdfs-sink's I/O timeout: shorter, calls only stall (TCP
// delivers them after the heal) and nothing fails.
func partitionFault(svc, what string) Fault {
	var hold time.Duration
	switch svc {
	case "namenode", "datanode":
		hold = nameNodeRPCTimeout + 30*time.Second
	case "kafka":
		hold = kafkaHold
	case "registry":
		hold = registryHold
	}
	return Fault{
		Name: "partition-" + svc, What: what, Net: true, Hive: svc == "hms", Hold: hold,
		Inject: func(ctx context.Context, r *faultRun) error {
			if svc == "registry" {
				return r.withNewSchema(func() error { return r.ns.Partition(r.cfg.Port(svc)) })
			}
			return r.ns.Partition(r.cfg.Port(svc))
		},
		Heal: func(_ context.Context, r *faultRun) error { return r.ns.Heal(r.cfg.Port(svc)) },
	}
}

// nameNodeRPCTimeout is hdfs-sink's bound on one NameNode call (see
// storage/hdfs); a hung NameNode must outlast it to test what follows.
const nameNodeRPCTimeout = 60 * time.Second

// kafkaHold is the shortest Kafka outage tested: hdfs-sink reports Kafka
// failures once they have lasted 10 s, and a request in flight takes up to
// its own timeout to fail.
const kafkaHold = 30 * time.Second

// registryHold is the shortest registry outage tested: a lookup of a hung
// registry fails after the client's 10 s request timeout.
const registryHold = 30 * time.Second

// Catalogue is every fault, in the order the long run takes them.
func Catalogue() []Fault {
	return append([]Fault{
		signalFault("namenode", "kill", "start", "NameNode SIGKILL, restarted after the hold", 0),
		signalFault("namenode", "stop", "cont", "NameNode SIGSTOP past the client's RPC timeout, then SIGCONT", nameNodeRPCTimeout+30*time.Second),
		{
			Name: "namenode-safemode", What: "safe mode entered by `hdfs dfsadmin -safemode enter`, then left",
			Needs:  []string{"dfsadmin"},
			Inject: func(ctx context.Context, r *faultRun) error { return r.do(ctx, "dfsadmin", "-safemode", "enter") },
			Heal:   func(ctx context.Context, r *faultRun) error { return r.do(ctx, "dfsadmin", "-safemode", "leave") },
		},
		signalFault("datanode", "kill", "start", "the only DataNode SIGKILLed while files are open, restarted after the hold", 0),
		{
			Name: "datanode-full", What: "the DataNode's volume filled to its last megabytes, then freed",
			Needs:  []string{"datanode.fill", "datanode.free"},
			Inject: func(ctx context.Context, r *faultRun) error { return r.do(ctx, "datanode.fill") },
			Heal:   func(ctx context.Context, r *faultRun) error { return r.do(ctx, "datanode.free") },
		},
		quotaFault("space", "-setSpaceQuota", "-clrSpaceQuota", "an HDFS space quota on topics.dir smaller than one block, then cleared"),
		quotaFault("name", "-setQuota", "-clrQuota", "an HDFS name quota on topics.dir below the names it holds, then cleared"),
		signalFault("kafka", "kill", "start", "the Kafka broker SIGKILLed, restarted after the hold", kafkaHold),
		signalFault("kafka", "stop", "cont", "the Kafka broker SIGSTOPped past the group session timeout, then SIGCONT", sessionTimeout+20*time.Second),
		registryFault("kill", "start", "the schema registry SIGKILLed while records with a new schema id arrive, restarted (state kept)"),
		registryFault("stop", "cont", "the schema registry SIGSTOPped (hung) while records with a new schema id arrive"),
		signalFault("hms", "kill", "start", "the Hive Metastore SIGKILLed, restarted after the hold", 0),
		partitionFault("namenode", "packets between hdfs-sink and the NameNode dropped past the I/O timeout, then let through"),
		partitionFault("datanode", "packets between hdfs-sink and the DataNode dropped past the I/O timeout, then let through"),
		partitionFault("kafka", "packets between hdfs-sink and the Kafka broker dropped, then let through"),
		partitionFault("registry", "packets between hdfs-sink and the schema registry dropped (new schema ids arriving), then let through"),
		partitionFault("hms", "packets between hdfs-sink and the Hive Metastore dropped, then let through"),
		{
			Name: "slow-datanode", What: "hdfs-sink's link to the DataNode limited to 64 kbit/s, then restored", Net: true, Quiet: true,
			Inject: func(_ context.Context, r *faultRun) error { return r.ns.Slow(r.cfg.Port("datanode"), "64kbit") },
			Heal:   func(_ context.Context, r *faultRun) error { return r.ns.Unslow(r.cfg.Port("datanode")) },
		},
	}, haFaults()...)
}

// noHold: the fault is over when Inject returns (a failover is the whole
// fault; nothing stays broken to heal).
const noHold = -1

// streamingRate makes the DataNode faults strike in the middle of block
// writes: at 2,000 records/s (~300 KB/s over 4 partitions) every open
// file emits a 64 KB Avro block about every second, so each has an HDFS
// block under way with a live pipeline from its first second on. At the
// default rate a file's few kilobytes reach HDFS only at its close.
const streamingRate = 2000

// haTakeover is how long the nameservice has no active NameNode after the
// active is killed, before the standby is made active: about what ZKFC
// takes by default (a 5 s ZooKeeper session, then the transition).
const haTakeover = 10 * time.Second

// haFaults are the faults of the HA nameservice (Config.HA, testenv's HA
// profile): NameNode failovers, and DataNodes lost from pipelines of three
// (dfs.replication=3 on three DataNodes: every block is written through
// all of them).
func haFaults() []Fault {
	return []Fault{
		{
			Name: "ha-failover", What: "the active NameNode failed over to the standby (`hdfs haadmin -failover`) while files are open",
			HA: true, Quiet: true, Hold: noHold, Needs: []string{"ha.failover"},
			Inject: action("ha.failover"),
		},
		{
			Name: "ha-active-sigkill", What: "the active NameNode SIGKILLed; after 10 s the standby made active (`haadmin -failover`, fencing the dead one); the killed one started again as standby once hdfs-sink has recovered",
			HA: true, Hold: haTakeover, Needs: []string{"ha.kill-active", "ha.failover", "ha.start"},
			Inject: action("ha.kill-active"), Heal: action("ha.failover"), Restore: action("ha.start"),
		},
		freezeFailover("ha-failover-renames", "HDFS_SINK_FREEZE_AT=WAL_APPENDED:20",
			"hdfs-sink frozen (SIGSTOP) between a commit's published WAL segment and its renames; the NameNode failed over meanwhile, then hdfs-sink thawed"),
		freezeFailover("ha-failover-publish", "HDFS_SINK_FREEZE_RENAME=segment:20",
			"hdfs-sink frozen inside a WAL segment's publish (segment written and closed, the staging directory's rename, the commit point, not made); the NameNode failed over meanwhile, then hdfs-sink thawed"),
		{
			Name: "ha-datanode-sigkill", What: "one of three DataNodes SIGKILLed in the middle of block writes (every open file's block is written through it: replication 3), restarted after the hold",
			HA: true, Rate: streamingRate, Needs: []string{"ha.datanode.kill", "ha.start"},
			Inject: action("ha.datanode.kill", "2"), Heal: action("ha.start"),
		},
		{
			Name: "ha-datanode-lost", What: "one of three DataNodes SIGKILLed in the middle of block writes and not started again until the NameNode declares it dead (90 s without heartbeats in the test environment, 10.5 minutes by default), then once hdfs-sink has recovered",
			HA: true, Rate: streamingRate, Hold: noHold, Needs: []string{"ha.datanode.kill", "ha.datanode.await-dead", "ha.start"},
			Inject: action("ha.datanode.kill", "2"), Heal: action("ha.datanode.await-dead", "2"), Restore: action("ha.start"),
		},
		{
			Name: "ha-two-datanodes-down", What: "two of three DataNodes SIGKILLed in the middle of block writes (replication 3), restarted after the hold",
			HA: true, Rate: streamingRate, Needs: []string{"ha.datanode.kill", "ha.start"},
			Inject: func(ctx context.Context, r *faultRun) error {
				if err := r.do(ctx, "ha.datanode.kill", "2"); err != nil {
					return err
				}
				return r.do(ctx, "ha.datanode.kill", "3")
			},
			Heal: action("ha.start"),
		},
		{
			Name: "ha-datanode-decommission", What: "one of three DataNodes decommissioned (`dfsadmin -refreshNodes` with it excluded) while blocks are written through it, then put back in service",
			HA: true, Quiet: true, Rate: streamingRate, Needs: []string{"ha.datanode.decommission", "ha.datanode.recommission"},
			Inject: action("ha.datanode.decommission", "3"), Heal: action("ha.datanode.recommission", "3"),
		},
	}
}

// action is a fault step that performs one action.
func action(a string, args ...string) func(context.Context, *faultRun) error {
	return func(ctx context.Context, r *faultRun) error { return r.do(ctx, a, args...) }
}

// freezeFailover freezes the daemon where env says (a switch of the
// faults build: SIGSTOP by itself at that point), fails the NameNode over
// while it is frozen, and thaws it: its next calls go to the former
// active, a standby by then. The outage counts from the freeze.
func freezeFailover(name, env, what string) Fault {
	return Fault{
		Name: name, What: what, HA: true, Quiet: true, Hold: noHold, Env: []string{env}, Needs: []string{"ha.failover"},
		Inject: func(ctx context.Context, r *faultRun) error {
			if err := r.awaitFrozen(ctx, 3*time.Minute); err != nil {
				return fmt.Errorf("%w (%s: is the daemon built with -tags faults?)", err, env)
			}
			defer r.daemon.Signal(syscall.SIGCONT)
			return r.do(ctx, "ha.failover")
		},
	}
}

// awaitFrozen waits until the daemon has stopped itself by a
// fault-injection switch, and marks the moment the fault struck.
func (r *faultRun) awaitFrozen(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if !r.daemon.Alive() {
			return fmt.Errorf("hdfs-sink exited before it froze: %v", r.daemon.err)
		}
		said, _ := LogSince(r.res.Log, 0)
		if strings.Contains(said, "fault injection: SIGSTOP") && r.daemon.Stopped() {
			r.struck = time.Now()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("hdfs-sink did not freeze within %v", within)
}

// quotaFault sets an HDFS quota on the run's topics.dir.
func quotaFault(kind, set, clear, what string) Fault {
	return Fault{
		Name: "quota-" + kind, What: what, Needs: []string{"dfsadmin"},
		Inject: func(ctx context.Context, r *faultRun) error {
			// Below what is there: no new block (a block being written
			// reserves its whole size), or no new name, fits.
			limit := map[string]string{"space": "1m", "name": "1"}[kind]
			return r.do(ctx, "dfsadmin", set, limit, r.topicsDir())
		},
		Heal: func(ctx context.Context, r *faultRun) error { return r.do(ctx, "dfsadmin", clear, r.topicsDir()) },
	}
}

// registryFault stops the registry while records arrive whose schema id
// the daemon has never fetched.
func registryFault(verb, heal, what string) Fault {
	return Fault{
		Name: "registry-" + map[string]string{"kill": "sigkill", "stop": "sigstop"}[verb], What: what,
		Needs: []string{"registry." + verb, "registry." + heal}, Hold: registryHold,
		Inject: func(ctx context.Context, r *faultRun) error {
			return r.withNewSchema(func() error { return r.do(ctx, "registry."+verb) })
		},
		Heal: func(ctx context.Context, r *faultRun) error { return r.do(ctx, "registry."+heal) },
	}
}

func (r *faultRun) topicsDir() string { return path.Join(r.base, "topics") }

// withNewSchema registers a schema variant, runs stop (which makes the
// registry unreachable), and only then produces with the variant: records
// arrive whose schema id the daemon has never fetched.
func (r *faultRun) withNewSchema(stop func() error) error {
	id, err := r.traffic.RegisterVariant(r.serial())
	if err != nil {
		return err
	}
	if err := stop(); err != nil {
		return err
	}
	r.traffic.Use(id)
	return nil
}
