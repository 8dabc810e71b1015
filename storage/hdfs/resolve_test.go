package hdfs

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

// writeConf writes an hdfs-site.xml of the given properties into a new
// directory and returns it.
func writeConf(t *testing.T, file string, props map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("<?xml version=\"1.0\"?>\n<configuration>\n")
	for k, v := range props {
		fmt.Fprintf(&b, "  <property><name>%s</name><value>%s</value></property>\n", k, v)
	}
	b.WriteString("</configuration>\n")
	if err := os.WriteFile(filepath.Join(dir, file), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// twoNameservices is a gateway's hdfs-site.xml: the local cluster ns1 (two
// NameNodes) and a remote one for distcp.
func twoNameservices(nn1, nn2, remote string) map[string]string {
	return map[string]string{
		"dfs.nameservices":                   "ns1,remote",
		"dfs.ha.namenodes.ns1":               "nn1,nn2",
		"dfs.namenode.rpc-address.ns1.nn1":   nn1,
		"dfs.namenode.rpc-address.ns1.nn2":   nn2,
		"dfs.ha.namenodes.remote":            "r1",
		"dfs.namenode.rpc-address.remote.r1": remote,
	}
}

func TestResolve(t *testing.T) {
	ha := writeConf(t, "hdfs-site.xml", twoNameservices("10.0.0.1:8020", "10.0.0.2:8020", "10.9.9.9:8020"))
	single := writeConf(t, "hdfs-site.xml", map[string]string{"dfs.namenode.rpc-address.solo": "10.0.0.5:9000"})
	plain := writeConf(t, "core-site.xml", map[string]string{"fs.defaultFS": "hdfs://namenode:8020"})
	tests := []struct {
		name, url, dir string
		ns             string
		addrs          []string
	}{
		{"host without conf dir", "hdfs://nn", "", "", []string{"nn:8020"}},
		{"host and port without conf dir", "hdfs://nn:9000/data", "", "", []string{"nn:9000"}},
		{"HA nameservice: its NameNodes only", "hdfs://ns1/data", ha, "ns1", []string{"10.0.0.1:8020", "10.0.0.2:8020"}},
		{"the other nameservice", "hdfs://remote", ha, "remote", []string{"10.9.9.9:8020"}},
		{"nameservice with the default port, which Hadoop ignores", "hdfs://ns1:8020", ha, "ns1", []string{"10.0.0.1:8020", "10.0.0.2:8020"}},
		{"single-NameNode nameservice", "hdfs://solo", single, "solo", []string{"10.0.0.5:9000"}},
		{"host:port with a conf dir", "hdfs://10.0.0.7:8020", ha, "", []string{"10.0.0.7:8020"}},
		{"bare host, conf dir without nameservices", "hdfs://namenode", plain, "", []string{"namenode:8020"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Resolve(Options{URL: tt.url, ConfDir: tt.dir})
			if err != nil {
				t.Fatal(err)
			}
			var addrs []string
			for _, nn := range got.NameNodes {
				addrs = append(addrs, nn.Addr)
			}
			if got.Nameservice != tt.ns || !reflect.DeepEqual(addrs, tt.addrs) {
				t.Fatalf("Resolve(%s) = %q %v, want %q %v", tt.url, got.Nameservice, addrs, tt.ns, tt.addrs)
			}
		})
	}
}

func TestResolveErrors(t *testing.T) {
	ha := writeConf(t, "hdfs-site.xml", twoNameservices("10.0.0.1:8020", "10.0.0.2:8020", "10.9.9.9:8020"))
	broken := writeConf(t, "hdfs-site.xml", map[string]string{"dfs.ha.namenodes.ns1": "nn1,nn2", "dfs.namenode.rpc-address.ns1.nn1": "10.0.0.1:8020"})
	kerb := writeConf(t, "core-site.xml", map[string]string{"hadoop.security.authentication": "kerberos"})
	empty := t.TempDir()
	tests := []struct{ name, url, dir, want string }{
		{"unknown nameservice", "hdfs://ns2", ha, `hdfs://ns2: no nameservice "ns2" in ` + ha + `/hdfs-site.xml (it defines ns1, remote); to name a NameNode host, give its port (hdfs://ns2:8020)`},
		{"nameservice with a port", "hdfs://ns1:9000", ha, `hdfs://ns1:9000: ns1 is a nameservice in ` + ha + `/hdfs-site.xml, and a nameservice URL takes no port (write hdfs://ns1)`},
		{"NameNode without address", "hdfs://ns1", broken, `dfs.namenode.rpc-address.ns1.nn2 is not set in ` + broken + `/hdfs-site.xml`},
		{"conf dir without files", "hdfs://nn", empty, `hadoop.conf.dir ` + empty + `: has neither core-site.xml nor hdfs-site.xml`},
		{"missing conf dir", "hdfs://nn", empty + "/nope", `hadoop.conf.dir ` + empty + `/nope: stat ` + empty + `/nope: no such file or directory`},
		{"kerberos without a login", "hdfs://nn:8020", kerb, `hadoop.conf.dir ` + kerb + ` sets hadoop.security.authentication=kerberos: set hdfs.authentication.kerberos=true with connect.hdfs.principal and connect.hdfs.keytab`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Check(Options{URL: tt.url, ConfDir: tt.dir})
			if err == nil || err.Error() != tt.want {
				t.Fatalf("Check(%s) error\n got: %v\nwant: %s", tt.url, err, tt.want)
			}
		})
	}
}

// dialCounter accepts and drops connections on loopback, counting them:
// a NameNode that is there but never answers.
type dialCounter struct {
	ln net.Listener
	mu sync.Mutex
	n  int
}

func newDialCounter(t *testing.T) *dialCounter {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &dialCounter{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.mu.Lock()
			d.n++
			d.mu.Unlock()
			c.Close()
		}
	}()
	return d
}

func (d *dialCounter) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// TestOnlyTheURLsNameNodesAreDialled: with an hdfs-site.xml of two
// nameservices, a client for hdfs://ns1 dials ns1's NameNodes and never
// the other cluster's (colinmarc/hdfs's own resolution dials both).
func TestOnlyTheURLsNameNodesAreDialled(t *testing.T) {
	nn1, nn2, remote := newDialCounter(t), newDialCounter(t), newDialCounter(t)
	dir := writeConf(t, "hdfs-site.xml", twoNameservices(nn1.ln.Addr().String(), nn2.ln.Addr().String(), remote.ln.Addr().String()))
	_, err := New(Options{URL: "hdfs://ns1/data", ConfDir: dir, DialTimeout: time.Second, Connections: 1})
	if err == nil {
		t.Fatal("connected to a NameNode that closes every connection")
	}
	if nn1.count()+nn2.count() == 0 {
		t.Fatalf("no NameNode of ns1 dialled (err %v)", err)
	}
	if n := remote.count(); n != 0 {
		t.Fatalf("the other nameservice's NameNode was dialled %d times", n)
	}
}
