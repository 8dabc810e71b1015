package main

import (
	"crypto/tls"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

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
