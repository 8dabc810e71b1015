package main

import (
	"flag"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/configs"
	"github.com/hdfs-sink/hdfs-sink/daemon"
)

// httpFlags are the flags of the HTTP server (the REST API, /metrics and
// the probes): `run` serves with them and `check` applies the same binding
// rule to them, so that a unit's ExecStartPre check refuses what run would.
type httpFlags struct {
	listen         string
	statusAddr     string // the flag before --listen; kept so existing units keep working
	readOnly       bool
	authFile       string
	tlsCert        string
	tlsKey         string
	clientCA       string
	insecureListen bool
	allowedHosts   string
}

const defaultListen = "127.0.0.1:8083"

func (hf *httpFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&hf.listen, "listen", defaultListen, "address of the REST API, /metrics, /healthz and /readyz (empty: off); an address other hosts can reach needs --rest-basic-auth-file, --rest-tls-client-ca or --read-only")
	fs.StringVar(&hf.statusAddr, "status-addr", "", "old name of --listen; wins when set")
	fs.BoolVar(&hf.readOnly, "read-only", false, "refuse every REST request that changes something (pause, resume, restart, config, delete)")
	fs.StringVar(&hf.authFile, "rest-basic-auth-file", "", "file of user:password lines; when set, the REST API and /metrics need HTTP basic authentication (not /healthz, /readyz)")
	fs.StringVar(&hf.tlsCert, "rest-tls-cert", "", "PEM certificate chain: serve HTTPS (with --rest-tls-key)")
	fs.StringVar(&hf.tlsKey, "rest-tls-key", "", "PEM private key of --rest-tls-cert")
	fs.StringVar(&hf.clientCA, "rest-tls-client-ca", "", "PEM CA certificates: the REST API and /metrics need a client certificate one of them signed (mutual TLS; with --rest-tls-cert)")
	fs.BoolVar(&hf.insecureListen, "insecure-listen", false, "allow an address other hosts can reach without authentication or --read-only (logs a WARN at every start)")
	fs.StringVar(&hf.allowedHosts, "rest-allowed-hosts", "", "comma-separated host names a changing request's Host header may give besides localhost, IP addresses and this host's name (a Kubernetes Service's names; .domain allows every name under it)")
}

// options are the daemon's HTTP options; the address depends on the
// worker file the daemon loads.
func (hf *httpFlags) options(fs *flag.FlagSet) daemon.HTTPOptions {
	return daemon.HTTPOptions{
		Listen:   func(w *configs.Worker) (string, string) { return hf.listenAddr(fs, w) },
		ReadOnly: hf.readOnly, AuthFile: hf.authFile, CertFile: hf.tlsCert, KeyFile: hf.tlsKey,
		ClientCAFile: hf.clientCA, InsecureListen: hf.insecureListen, AllowedHosts: splitComma(hf.allowedHosts),
	}
}

// listenAddr is --status-addr (the old name) or --listen when given, else
// the worker file's HTTP address (listeners, rest.host.name/rest.port),
// else the default; and where it came from, for messages.
func (hf *httpFlags) listenAddr(fs *flag.FlagSet, w *configs.Worker) (addr, origin string) {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "listen" })
	switch {
	case hf.statusAddr != "":
		return hf.statusAddr, "--status-addr"
	case given:
		return hf.listen, "--listen"
	case w != nil && w.HTTPAddr != "":
		return w.HTTPAddr, w.HTTPOrigin
	}
	return hf.listen, "the default --listen"
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
