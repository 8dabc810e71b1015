package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Config says where the services are and how to hurt them. The zero value
// plus Defaults is the test environment of testenv/testenv.sh; a staging
// cluster is described by a JSON file of the same shape (see
// docs/reliability.md, "Running it against your own cluster").
type Config struct {
	Kafka     string   `json:"kafka"`     // bootstrap host:port
	NameNode  string   `json:"namenode"`  // RPC host:port
	DataNodes []string `json:"datanodes"` // data transfer host:port of every DataNode
	Metastore string   `json:"metastore"` // thrift://host:port
	Registry  string   `json:"registry"`  // Confluent API base URL
	HDFSUser  string   `json:"hdfs_user"`
	// BaseDir is the HDFS directory each run writes below (one
	// subdirectory per fault or soak).
	BaseDir string `json:"base_dir"`
	// HA is the HA nameservice the failover and pipeline faults run
	// against (testenv's HA profile by default): two NameNodes, three
	// DataNodes, dfs.replication=3.
	HA HAConfig `json:"ha"`
	// Commands maps an action ("namenode.kill", "dfsadmin", …; see
	// Actions) to a shell command run with bash -c; arguments of the
	// action are appended, shell-quoted. Actions missing here fall back to
	// the test environment's, unless NoTestenv is set, in which case the
	// faults that need them are reported as not run.
	Commands  map[string]string `json:"commands"`
	NoTestenv bool              `json:"no_testenv"`
	// Netns is the name of the daemon's own network namespace ("" for
	// hdfs-sink-chaos-<pid>: namespace names are global to the machine,
	// so two harness runs must not share one, or the first to finish
	// deletes the other's); Netns "none" runs the daemon in the harness's
	// own namespace, and the network faults are not run.
	Netns string `json:"netns"`
}

// HAConfig names an HA nameservice: connectors write to
// hdfs://<Nameservice> with hadoop.conf.dir ConfDir, and the harness
// checks what they wrote through the same configuration.
type HAConfig struct {
	Nameservice string `json:"nameservice"`
	ConfDir     string `json:"conf_dir"`
}

// Actions are what faults ask Control to do. For a service S in kafka,
// namenode, datanode, hms and registry: "S.kill" (SIGKILL), "S.stop"
// (SIGSTOP), "S.cont" (SIGCONT) and "S.start" (start again after a kill
// and return once it serves); "dfsadmin" (the hdfs dfsadmin command, the
// action's arguments appended); "datanode.fill" and "datanode.free" (fill
// the DataNode's volume to the last few megabytes, and undo it). On the HA
// nameservice: "ha.failover" (fail over from the active NameNode to the
// other and return once it is active; a dead active is fenced),
// "ha.kill-active" (SIGKILL the active NameNode), "ha.start" (start what
// was killed again: a NameNode comes back as standby; return once one
// NameNode is active, the other standby and every DataNode in service),
// and "ha.datanode.kill", "ha.datanode.decommission",
// "ha.datanode.recommission", "ha.datanode.await-dead" (return once the
// active NameNode counts it dead) with the DataNode's number (1, 2, 3)
// appended.
var Actions = []string{
	"kafka.kill", "kafka.stop", "kafka.cont", "kafka.start",
	"namenode.kill", "namenode.stop", "namenode.cont", "namenode.start",
	"datanode.kill", "datanode.stop", "datanode.cont", "datanode.start", "datanode.fill", "datanode.free",
	"hms.kill", "hms.stop", "hms.cont", "hms.start",
	"registry.kill", "registry.stop", "registry.cont", "registry.start",
	"dfsadmin",
	"ha.failover", "ha.kill-active", "ha.start",
	"ha.datanode.kill", "ha.datanode.decommission", "ha.datanode.recommission", "ha.datanode.await-dead",
}

// LoadConfig reads a JSON config; an empty path is the test environment.
func LoadConfig(path string) (Config, error) {
	var c Config
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, err
		}
		dec := json.NewDecoder(strings.NewReader(string(b)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c); err != nil {
			return c, fmt.Errorf("%s: %w", path, err)
		}
	}
	c.Defaults()
	return c, c.validate()
}

// Defaults fills what is unset with the test environment's values.
func (c *Config) Defaults() {
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&c.Kafka, "127.0.0.1:9092")
	def(&c.NameNode, "127.0.0.1:8020")
	def(&c.Metastore, "thrift://127.0.0.1:9083")
	def(&c.Registry, "http://127.0.0.1:8081/apis/ccompat/v7")
	def(&c.HDFSUser, "root")
	def(&c.BaseDir, "/chaos")
	def(&c.Netns, fmt.Sprintf("hdfs-sink-chaos-%d", os.Getpid()))
	if len(c.DataNodes) == 0 {
		c.DataNodes = []string{"127.0.0.1:9866"}
	}
	if !c.NoTestenv && c.HA.Nameservice == "" {
		c.HA.Nameservice = "hdfsha"
		if root, err := RepoRoot(); err == nil {
			c.HA.ConfDir = filepath.Join(root, ".testenv", "ha-client-conf")
		}
	}
}

func (c *Config) validate() error {
	for _, a := range slices.Sorted(maps.Keys(c.Commands)) {
		if !slices.Contains(Actions, a) {
			return fmt.Errorf("commands: unknown action %q (known: %s)", a, strings.Join(Actions, ", "))
		}
	}
	if (c.HA.Nameservice == "") != (c.HA.ConfDir == "") {
		return fmt.Errorf("ha: name both nameservice and conf_dir, or neither")
	}
	for _, hp := range c.hostPorts() {
		if _, _, err := net.SplitHostPort(hp); err != nil {
			return fmt.Errorf("address %q: want host:port", hp)
		}
	}
	return nil
}

// hostPorts is every service address the daemon dials.
func (c *Config) hostPorts() []string {
	out := append([]string{c.Kafka, c.NameNode, hostPort(c.Metastore, "9083"), hostPort(c.Registry, "80")}, c.DataNodes...)
	return out
}

// Port is the TCP port of a service, for partitions and connection counts.
func (c *Config) Port(svc string) int {
	var hp string
	switch svc {
	case "kafka":
		hp = c.Kafka
	case "namenode":
		hp = c.NameNode
	case "datanode":
		hp = c.DataNodes[0]
	case "hms":
		hp = hostPort(c.Metastore, "9083")
	case "registry":
		hp = hostPort(c.Registry, "80")
	}
	_, p, _ := net.SplitHostPort(hp)
	n, _ := strconv.Atoi(p)
	return n
}

// hostPort is the host:port of a URL, with def as the port if it has none.
func hostPort(raw, def string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), def)
	}
	return u.Host
}

// Loopback reports whether every service is on this machine's loopback.
func (c *Config) Loopback() bool { return IsLoopback(c.hostPorts()...) }

// RepoRoot is the module root, found from the working directory up.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}
