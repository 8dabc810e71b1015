// Command itest-oauth is the test environment's OAuth 2 token endpoint: it
// grants client credentials (RFC 6749 §4.4) as signed JWTs (RS256) and
// publishes its key as a JWKS, so the test Kafka broker validates them with
// Kafka's own OIDC validator. It is a test server: one key made at start,
// clients from the command line, nothing kept.
//
//	POST /token  grant_type=client_credentials, client by HTTP basic auth
//	GET  /jwks   the signing key
//	GET  /stats  tokens issued per client, as JSON
package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8095", "listen address")
	clients := flag.String("clients", "", "comma list of id:secret")
	lifetime := flag.Duration("lifetime", 30*time.Second, "token lifetime")
	issuer := flag.String("issuer", "", "iss claim (default http://<addr>)")
	audience := flag.String("audience", "hdfs-sink-test", "aud claim")
	flag.Parse()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		log.Fatal(err)
	}
	s := &server{key: key, clients: parseClients(*clients), life: *lifetime, aud: *audience,
		iss: first(*issuer, "http://"+*addr), issued: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.token)
	mux.HandleFunc("GET /jwks", s.jwks)
	mux.HandleFunc("GET /stats", s.stats)
	log.SetOutput(os.Stdout)
	log.Printf("itest-oauth on %s: %d clients, tokens valid %v", *addr, len(s.clients), *lifetime)
	log.Fatal(http.ListenAndServe(*addr, mux))
}

type server struct {
	key      *rsa.PrivateKey
	clients  map[string]string
	life     time.Duration
	iss, aud string

	mu     sync.Mutex
	issued map[string]int
}

func parseClients(s string) map[string]string {
	m := map[string]string{}
	for _, c := range strings.Split(s, ",") {
		if id, secret, ok := strings.Cut(strings.TrimSpace(c), ":"); ok {
			m[id] = secret
		}
	}
	return m
}

func first(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *server) token(w http.ResponseWriter, r *http.Request) {
	id, secret, ok := r.BasicAuth()
	if !ok {
		id, secret = r.PostFormValue("client_id"), r.PostFormValue("client_secret")
	}
	if want, known := s.clients[id]; !known || want != secret || r.PostFormValue("grant_type") != "client_credentials" {
		log.Printf("token refused for client %q", id)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, `{"error":"invalid_client","error_description":"unknown client or wrong secret"}`)
		return
	}
	now := time.Now()
	tok, err := s.sign(map[string]any{"sub": id, "iss": s.iss, "aud": s.aud, "iat": now.Unix(), "nbf": now.Unix(),
		"exp": now.Add(s.life).Unix(), "scope": r.PostFormValue("scope"), "jti": fmt.Sprint(now.UnixNano())})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	s.issued[id]++
	n := s.issued[id]
	s.mu.Unlock()
	log.Printf("token %d issued to %q, valid %v", n, id, s.life)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": int(s.life.Seconds())})
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func (s *server) sign(claims map[string]any) (string, error) {
	head, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": "itest"})
	body, _ := json.Marshal(claims)
	input := b64(head) + "." + b64(body)
	sum := sha256.Sum256([]byte(input))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.key, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return input + "." + b64(sig), nil
}

func (s *server) jwks(w http.ResponseWriter, _ *http.Request) {
	pub := s.key.PublicKey
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"keys": []map[string]string{{
		"kty": "RSA", "kid": "itest", "use": "sig", "alg": "RS256",
		"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes()),
	}}})
}

func (s *server) stats(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"issued": s.issued})
}
