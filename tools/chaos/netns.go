package chaos

import (
	"fmt"
	"hash/fnv"
	"net"
	"os/exec"
	"strings"
)

// Netns is a network namespace of the harness's own for the daemon, joined
// to the harness's namespace by a veth pair. Partitions and slow links are
// iptables and tc rules inside it (or on its veth), so they cut hdfs-sink
// off from one service while everything else (the DataNode's heartbeats,
// the metastore's HDFS calls, the verifier) keeps talking.
//
// Two modes, chosen by the service addresses:
//   - loopback (the test environment: every service on 127.0.0.1 of the
//     harness's namespace): inside the daemon's namespace, connections to
//     127.0.0.1 are DNATed to the veth peer and masqueraded; on the peer
//     side they are DNATed back to 127.0.0.1 (route_localnet on both
//     ends). Addresses the services hand out (Kafka's advertised listener,
//     the NameNode's DataNode address) stay 127.0.0.1 and still work.
//   - routed (a staging cluster): the namespace's default route is the
//     veth peer, which forwards and masquerades.
type Netns struct {
	Name     string
	host     string // veth end in the harness's namespace
	peer     string // veth end inside Name
	HostIP   string // the harness side's address
	DaemonIP string // the daemon side's address: where its status endpoint listens
	loopback bool
}

// NewNetns names a namespace and its veth ends; Create makes them.
func NewNetns(name string, loopback bool) *Netns {
	h := fnv.New32a()
	h.Write([]byte(name))
	id := h.Sum32()
	// Interface names have at most 15 bytes; a /30 out of 10.200.0.0/16.
	sub := id % 16384
	a, b := 200, sub*4
	return &Netns{
		Name: name, host: fmt.Sprintf("hsh%08x", id)[:11], peer: fmt.Sprintf("hsp%08x", id)[:11],
		HostIP:   fmt.Sprintf("10.%d.%d.%d", a, b/256, b%256+1),
		DaemonIP: fmt.Sprintf("10.%d.%d.%d", a, b/256, b%256+2),
		loopback: loopback,
	}
}

// IsLoopback reports whether every address is on loopback (the test
// environment), which selects the namespace's loopback mode.
func IsLoopback(hostports ...string) bool {
	for _, hp := range hostports {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			host = hp
		}
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return false
		}
	}
	return true
}

// Create makes the namespace, the veth pair and the NAT rules. It first
// removes what an earlier run of the same name left behind.
func (n *Netns) Create() error {
	n.Delete()
	steps := [][]string{
		{"ip", "netns", "add", n.Name},
		n.in("ip", "link", "set", "lo", "up"),
		{"ip", "link", "add", n.host, "type", "veth", "peer", "name", n.peer},
		{"ip", "link", "set", n.peer, "netns", n.Name},
		{"ip", "addr", "add", n.HostIP + "/30", "dev", n.host},
		{"ip", "link", "set", n.host, "up"},
		n.in("ip", "addr", "add", n.DaemonIP+"/30", "dev", n.peer),
		n.in("ip", "link", "set", n.peer, "up"),
		n.in("ip", "route", "add", "default", "via", n.HostIP),
	}
	if n.loopback {
		steps = append(steps, n.loopbackNAT()...)
	} else {
		steps = append(steps, n.routedNAT()...)
	}
	return run(steps...)
}

func (n *Netns) loopbackNAT() [][]string {
	return [][]string{
		n.in("sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1"),
		n.in("sysctl", "-qw", "net.ipv4.conf."+n.peer+".route_localnet=1"),
		n.in("iptables", "-t", "nat", "-A", "OUTPUT", "-d", "127.0.0.0/8", "-p", "tcp", "-j", "DNAT", "--to-destination", n.HostIP),
		n.in("iptables", "-t", "nat", "-A", "POSTROUTING", "-o", n.peer, "-j", "MASQUERADE"),
		{"sysctl", "-qw", "net.ipv4.conf." + n.host + ".route_localnet=1"},
		{"iptables", "-t", "nat", "-A", "PREROUTING", "-i", n.host, "-d", n.HostIP, "-p", "tcp", "-j", "DNAT", "--to-destination", "127.0.0.1"},
	}
}

func (n *Netns) routedNAT() [][]string {
	return [][]string{
		{"sysctl", "-qw", "net.ipv4.ip_forward=1"},
		{"iptables", "-t", "nat", "-A", "POSTROUTING", "-s", n.DaemonIP + "/32", "!", "-o", n.host, "-j", "MASQUERADE"},
	}
}

// Delete removes the namespace (its veth end goes with it) and the rules
// on this side; missing pieces are not errors.
func (n *Netns) Delete() {
	quiet := func(args ...string) { _ = exec.Command(args[0], args[1:]...).Run() }
	quiet("iptables", "-t", "nat", "-D", "PREROUTING", "-i", n.host, "-d", n.HostIP, "-p", "tcp", "-j", "DNAT", "--to-destination", "127.0.0.1")
	quiet("iptables", "-t", "nat", "-D", "POSTROUTING", "-s", n.DaemonIP+"/32", "!", "-o", n.host, "-j", "MASQUERADE")
	quiet("ip", "link", "del", n.host)
	quiet("ip", "netns", "del", n.Name)
}

// Exec is argv run inside the namespace.
func (n *Netns) Exec(argv ...string) []string {
	return append([]string{"ip", "netns", "exec", n.Name}, argv...)
}

func (n *Netns) in(argv ...string) []string { return n.Exec(argv...) }

// Partition drops every packet between the daemon and TCP port port, both
// ways, until Heal. New connections time out, established ones stall: what
// a lost route or a firewall change looks like to the daemon.
func (n *Netns) Partition(port int) error {
	p := fmt.Sprint(port)
	return run(
		n.in("iptables", "-I", "OUTPUT", "-p", "tcp", "--dport", p, "-j", "DROP"),
		n.in("iptables", "-I", "INPUT", "-p", "tcp", "--sport", p, "-j", "DROP"),
	)
}

// Heal removes a Partition.
func (n *Netns) Heal(port int) error {
	p := fmt.Sprint(port)
	return run(
		n.in("iptables", "-D", "OUTPUT", "-p", "tcp", "--dport", p, "-j", "DROP"),
		n.in("iptables", "-D", "INPUT", "-p", "tcp", "--sport", p, "-j", "DROP"),
	)
}

// Slow limits the daemon's traffic to and from port to rate (tc syntax,
// e.g. "16kbit") with an HTB class on each veth end: a slow link or an
// overloaded service, as far as the daemon can tell. (The kernel of the
// test machine has no netem, so there is no fixed delay, only a rate.)
func (n *Netns) Slow(port int, rate string) error {
	var steps [][]string
	for _, s := range n.slowSides(port) {
		steps = append(steps,
			s.at("tc", "qdisc", "add", "dev", s.dev, "root", "handle", "1:", "htb", "default", "1"),
			s.at("tc", "class", "add", "dev", s.dev, "parent", "1:", "classid", "1:1", "htb", "rate", "10gbit"),
			s.at("tc", "class", "add", "dev", s.dev, "parent", "1:", "classid", "1:2", "htb", "rate", rate, "ceil", rate),
			s.at(append([]string{"iptables", "-t", "mangle", "-A"}, s.rule...)...))
	}
	return run(steps...)
}

// Unslow removes what Slow(port, ...) added.
func (n *Netns) Unslow(port int) error {
	var steps [][]string
	for _, s := range n.slowSides(port) {
		steps = append(steps, s.at(append([]string{"iptables", "-t", "mangle", "-D"}, s.rule...)...),
			s.at("tc", "qdisc", "del", "dev", s.dev, "root"))
	}
	return run(steps...)
}

// slowSide is one veth end of a slow link: its device, the mangle rule
// that classifies the port's packets, and where commands for it run.
type slowSide struct {
	dev  string
	rule []string
	at   func(argv ...string) []string
}

func (n *Netns) slowSides(port int) []slowSide {
	p := fmt.Sprint(port)
	rule := func(dev, dir string) []string {
		return []string{"POSTROUTING", "-o", dev, "-p", "tcp", dir, p, "-j", "CLASSIFY", "--set-class", "1:2"}
	}
	here := func(argv ...string) []string { return argv }
	return []slowSide{
		{dev: n.peer, rule: rule(n.peer, "--dport"), at: n.in}, // daemon → service
		{dev: n.host, rule: rule(n.host, "--sport"), at: here}, // service → daemon
	}
}

// run runs each argv in turn and stops at the first failure.
func run(steps ...[]string) error {
	for _, argv := range steps {
		out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%s: %v: %s", strings.Join(argv, " "), err, strings.TrimSpace(string(out)))
		}
	}
	return nil
}
