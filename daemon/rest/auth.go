package rest

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"
)

// users are the basic-auth credentials, by user, as SHA-256 digests: equal
// lengths for the constant-time comparison.
type users map[string][32]byte

// loadUsers reads user:password lines (# comments and blank lines skipped):
// the format of Kafka Connect's PropertyFileLoginModule file, with ":".
func loadUsers(path string) (users, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--rest-basic-auth-file: %w", err)
	}
	defer f.Close()
	u := users{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, pass, ok := strings.Cut(line, ":")
		if !ok || name == "" {
			return nil, fmt.Errorf("--rest-basic-auth-file %s line %d: want user:password", path, n)
		}
		u[name] = sha256.Sum256([]byte(pass))
	}
	if len(u) == 0 {
		return nil, fmt.Errorf("--rest-basic-auth-file %s: no user", path)
	}
	return u, sc.Err()
}

// allows checks a request's basic credentials in constant time per user.
func (u users) allows(r *http.Request) bool {
	name, pass, ok := r.BasicAuth()
	want, known := u[name]
	got := sha256.Sum256([]byte(pass))
	return ok && known && subtle.ConstantTimeCompare(got[:], want[:]) == 1
}

// access is what a request must show: basic credentials of users (nil:
// none asked) and, with clientCert, a client certificate the TLS
// handshake verified against --rest-tls-client-ca. With both, both.
type access struct {
	users      users
	clientCert bool
}

// authenticated wraps h with the access checks asked for.
func (a access) authenticated(h http.Handler) http.Handler {
	if a.users == nil && !a.clientCert {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.clientCert && (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) {
			writeError(w, http.StatusUnauthorized, "a client certificate signed by a CA of --rest-tls-client-ca is required")
			return
		}
		if a.users != nil && !a.users.allows(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="hdfs-sink"`)
			writeError(w, http.StatusUnauthorized, "authentication required")
			return
		}
		h.ServeHTTP(w, r)
	})
}
