package chaos

import (
	"context"
	"path"
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
	// Hold is how long the fault lasts at least (Options.Hold when 0).
	Hold   time.Duration
	Inject func(ctx context.Context, r *faultRun) error
	Heal   func(ctx context.Context, r *faultRun) error
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
	return []Fault{
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
	}
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
