package rest

import (
	"fmt"
	"mime"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
)

// Browser guards: what keeps a web page, opened on a host that can reach
// the API, from changing anything. A page can make a browser send a
// request to any address (cross-site request forgery), and can point a
// name it owns at 127.0.0.1 to read and write as if it were this server
// (DNS rebinding). Reads (GET, HEAD) pass unchanged; a changing request
// (POST, PUT, PATCH, DELETE) is refused with
//   - 403 when its Host is a name this server does not answer to (hostRule),
//   - 403 when it has an Origin other than the server's own,
//   - 415 when it has a body that is not application/json.
// Kafka Connect's clients (curl, UIs calling from their server side) send
// neither a foreign Origin nor a foreign Host; a page cannot send a JSON
// body across origins without a CORS preflight, which this server never
// grants.

// browserGuard refuses changing requests a browser page could forge.
func (a *API) browserGuard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isRead(r.Method) {
			h.ServeHTTP(w, r)
			return
		}
		if code, msg := a.refusal(r); code != 0 {
			writeError(w, code, msg)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func isRead(method string) bool {
	return method == http.MethodGet || method == http.MethodHead || method == http.MethodOptions
}

// refusal is the status and message that refuse r; 0: none.
func (a *API) refusal(r *http.Request) (int, string) {
	if !a.hosts.allows(r.Host) {
		return http.StatusForbidden, fmt.Sprintf("Host %q is not a name of this server: changes are refused for names it was not told about "+
			"(DNS rebinding); use its address, localhost, or a name given with --rest-allowed-hosts", r.Host)
	}
	if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
		return http.StatusForbidden, fmt.Sprintf("Origin %q is not this server's: changes from another site's pages are refused (cross-site request forgery)", o)
	}
	if !jsonBody(r) {
		return http.StatusUnsupportedMediaType, "a request that changes something must send its body as Content-Type: application/json"
	}
	return 0, ""
}

// sameOrigin reports whether origin (scheme://host[:port]) names host (the
// Host header), default ports aside. The scheme is not compared: behind a
// TLS-terminating proxy the server sees HTTP, and no other site can serve
// the same host and port under another scheme.
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false // "null" (sandboxed frames, file: pages) is another origin
	}
	return strings.EqualFold(withoutDefaultPort(u.Host, u.Scheme), withoutDefaultPort(host, u.Scheme))
}

func withoutDefaultPort(hostport, scheme string) string {
	if h, p, err := net.SplitHostPort(hostport); err == nil && (scheme == "http" && p == "80" || scheme == "https" && p == "443") {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return hostport
}

// jsonBody reports whether r's body is JSON, or there is none: Connect's
// own examples pause, resume and restart with a bare `curl -X PUT`, and a
// request without a body carries nothing to forge with.
func jsonBody(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.ContentLength == 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// hostRule is the names a changing request's Host header may give: any IP
// address (a page cannot make a browser send another site's request with
// an IP Host: DNS rebinding needs a name), localhost, this machine's host
// name, the listen address's own host, and the names given. A leading "."
// (or "*.") allows every name under a domain. The port is not compared:
// port mappings and Kubernetes Services change it, and the Origin check
// compares it.
type hostRule struct {
	names    map[string]bool
	suffixes []string
}

func newHostRule(addr string, allowed []string) hostRule {
	r := hostRule{names: map[string]bool{"localhost": true}}
	if h, _, err := net.SplitHostPort(addr); err == nil && h != "" {
		r.names[normalHost(h)] = true
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		r.names[normalHost(h)] = true
	}
	for _, n := range allowed {
		n = normalHost(strings.TrimPrefix(n, "*"))
		switch {
		case n == "" || n == ".":
		case strings.HasPrefix(n, "."):
			r.suffixes = append(r.suffixes, n)
		default:
			r.names[n] = true
		}
	}
	return r
}

func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
}

func (r hostRule) allows(host string) bool {
	if host == "" {
		return true // HTTP/1.0 without Host: no browser sends that
	}
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = normalHost(strings.TrimSuffix(strings.TrimPrefix(name, "["), "]"))
	if net.ParseIP(name) != nil || r.names[name] {
		return true
	}
	for _, s := range r.suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}
