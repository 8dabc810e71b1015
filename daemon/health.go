package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/plugin/kprom"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/metrics"
	"github.com/hdfs-sink/hdfs-sink/schema"
	"github.com/hdfs-sink/hdfs-sink/sink"
	"github.com/hdfs-sink/hdfs-sink/storage"
)

// healthCheck asks, every healthEvery while its connector runs, whether
// Kafka, the registry and the store answer. Its results are readiness
// (/readyz) and dependency_up; the log ends it reads are lag that keeps
// growing while nothing is fetched.
type healthCheck struct {
	d     *daemon
	c     *configs.Connector
	conn  *sink.Connector
	reg   schema.Registry
	store storage.FS
}

// pinger is a registry that can be asked whether it answers
// (registry.Client); others count as reachable.
type pinger interface {
	Ping(ctx context.Context) error
}

// checkTimeout bounds each dependency's answer.
const checkTimeout = 5 * time.Second

func (h *healthCheck) run(ctx context.Context) {
	for {
		h.once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(h.d.healthEvery):
		}
	}
}

func (h *healthCheck) once(parent context.Context) {
	ctx, cancel := context.WithTimeout(parent, checkTimeout)
	defer cancel()
	ends, err := h.conn.LogEnds(ctx)
	if parent.Err() != nil {
		return // stopping: not an outage
	}
	h.d.metrics.SetLogEnds(h.c.Name, ends)
	h.d.board.setDep(h.c.Name, depKafka, err)
	h.d.board.setDep(h.c.Name, depRegistry, h.pingRegistry(ctx))
	h.d.board.setDep(h.c.Name, depStore, h.statStore(ctx))
}

func (h *healthCheck) pingRegistry(ctx context.Context) error {
	if p, ok := h.reg.(pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// statStore stats the store URL's path: a NameNode round trip. The store
// API takes no context, so a store that hangs is waited for checkTimeout
// and left to answer in the background.
func (h *healthCheck) statStore(ctx context.Context) error {
	done := make(chan error, 1)
	go func() {
		_, err := h.store.Stat(h.c.Store.Path)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil // the store answered; the path appears with the first commit
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("store did not answer within %v", checkTimeout)
	}
}

// kafkaMetrics is franz-go's kprom plugin for one connector's client, its
// series labelled with the connector (client ids can be overridden, and
// may collide).
func kafkaMetrics(name string, m *metrics.Metrics) kgo.Opt {
	return kgo.WithHooks(kprom.NewMetrics(metrics.Namespace, kprom.Subsystem("kafka"), kprom.Registerer(m.Registerer()),
		kprom.WithStaticLabel(map[string]string{"connector": name})))
}

// cmdHealth is `hdfs-sink health`: the probe for images without curl.
// Exit 0 when ready (or alive, with --live), 1 otherwise, 2 on usage.
func cmdHealth(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", defaultListen, "the daemon's --listen address")
	live := fs.Bool("live", false, "ask /healthz (the process answers) instead of /readyz")
	useTLS := fs.Bool("tls", false, "use HTTPS (the daemon runs with --rest-tls-cert)")
	insecure := fs.Bool("insecure", false, "with --tls, do not verify the certificate (a probe on localhost)")
	timeout := fs.Duration("timeout", 5*time.Second, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	url := healthURL(*addr, *useTLS, *live)
	client := &http.Client{Timeout: *timeout, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: *insecure}}}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(stderr, "hdfs-sink health:", err)
		return 1
	}
	defer resp.Body.Close()
	return reportHealth(resp, stdout, stderr)
}

func healthURL(addr string, useTLS, live bool) string {
	scheme, path := "http", "/readyz"
	if useTLS {
		scheme = "https"
	}
	if live {
		path = "/healthz"
	}
	return scheme + "://" + addr + path
}

func reportHealth(resp *http.Response, stdout, stderr io.Writer) int {
	var doc struct {
		Status  string   `json:"status"`
		Reasons []string `json:"reasons"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		fmt.Fprintf(stderr, "hdfs-sink health: %s: %v\n", resp.Status, err)
		return 1
	}
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "%s\n  %s\n", doc.Status, strings.Join(doc.Reasons, "\n  "))
		return 1
	}
	fmt.Fprintln(stdout, doc.Status)
	return 0
}
