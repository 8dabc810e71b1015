package itest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/hdfs-sink/hdfs-sink/kafkaclient"
)

// The secured side of the test environment (testenv/secure.sh). The
// credentials are test values, the same in the start script.
const (
	KafkaSSLAddr           = "127.0.0.1:9094" // TLS, server certificate only
	KafkaMTLSAddr          = "127.0.0.1:9095" // TLS, client certificate required
	KafkaSASLSSLAddr       = "127.0.0.1:9096" // SASL_SSL: PLAIN, SCRAM-SHA-512, OAUTHBEARER
	KafkaSASLPlaintextAddr = "127.0.0.1:9097" // SASL_PLAINTEXT: PLAIN, SCRAM-SHA-512
	KafkaBadHostAddr       = "127.0.0.1:9098" // TLS with a certificate for elsewhere.invalid
	KafkaExpiredAddr       = "127.0.0.1:9099" // TLS with a certificate that expired in 2024

	SASLUser      = "sink"
	SASLPassword  = "sink-secret"
	StorePassword = "test-store-pw" // every JKS and PKCS12 store and key
	KeyPassword   = "test-key-pw"   // client-keystore-enc.pem's key
	OAuthClient   = "sink"
	OAuthSecret   = "sink-oauth-secret"

	RegistryTLSURL  = "https://127.0.0.1:8443/apis/ccompat/v7" // TLS, basic auth SASLUser / SASLPassword
	RegistryMTLSURL = "https://127.0.0.1:8444/apis/ccompat/v7" // TLS, client certificate required

	EnvPKI      = "HDFS_SINK_TESTENV_PKI"
	EnvOAuthURL = "HDFS_SINK_TESTENV_OAUTH_URL"

	ServiceKafkaSecure = "Kafka (SASL_SSL)"
	ServiceOAuth       = "OAuth token endpoint"
	ServiceRegistryTLS = "Schema Registry (TLS)"
)

// PKI is the path of a file the start script made in its certificate
// directory: ca.pem, other-ca.pem, truststore.{jks,p12}, client.{jks,p12},
// client-keystore.pem, client-keystore-enc.pem, ...
func PKI(name string) string {
	dir := setting(EnvPKI, "")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), ".testenv", "pki")
	}
	return filepath.Join(dir, name)
}

// OAuthURL is the token server's base URL; its token endpoint is /token.
func OAuthURL() string { return setting(EnvOAuthURL, "http://127.0.0.1:8095") }

// SCRAMJAAS is the sasl.jaas.config of user with password.
func SCRAMJAAS(user, password string) string {
	return fmt.Sprintf(`org.apache.kafka.common.security.scram.ScramLoginModule required username="%s" password="%s";`, user, password)
}

// CheckKafkaSecure asks the SASL_SSL listener for metadata as SASLUser
// with SCRAM-SHA-512 and the JKS trust store: the broker's TLS, SCRAM
// users and listener are up.
func CheckKafkaSecure(ctx context.Context) error {
	wrap := func(err error) error { return &ServiceError{ServiceKafkaSecure, KafkaSASLSSLAddr, err} }
	sec, err := kafkaclient.Parse(kafkaclient.Props{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": SCRAMJAAS(SASLUser, SASLPassword),
		"ssl.truststore.location": PKI("truststore.jks"), "ssl.truststore.password": StorePassword,
	}, nil)
	if err != nil {
		return wrap(err)
	}
	sec.SetLogger(slog.New(slog.DiscardHandler))
	if err := sec.WaitReady(ctx, []string{KafkaSASLSSLAddr}); err != nil {
		return wrap(err)
	}
	return nil
}

// CheckOAuth requires a token for the test client.
func CheckOAuth(ctx context.Context) error {
	wrap := func(err error) error { return &ServiceError{ServiceOAuth, OAuthURL(), err} }
	form := url.Values{"grant_type": {"client_credentials"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, OAuthURL()+"/token", strings.NewReader(form.Encode()))
	if err != nil {
		return wrap(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(OAuthClient, OAuthSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return wrap(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return wrap(fmt.Errorf("POST /token: HTTP %d", resp.StatusCode))
	}
	return nil
}

// OAuthIssued is how many tokens the token server has issued to client.
func OAuthIssued(ctx context.Context, client string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, OAuthURL()+"/stats", nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var st struct{ Issued map[string]int }
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return 0, err
	}
	return st.Issued[client], nil
}

// CheckRegistryTLS lists subjects through the TLS proxy with basic auth,
// trusting only the test CA.
func CheckRegistryTLS(ctx context.Context) error {
	wrap := func(err error) error { return &ServiceError{ServiceRegistryTLS, RegistryTLSURL, err} }
	pem, err := os.ReadFile(PKI("ca.pem"))
	if err != nil {
		return wrap(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, RegistryTLSURL+"/subjects", nil)
	if err != nil {
		return wrap(err)
	}
	req.SetBasicAuth(SASLUser, SASLPassword)
	resp, err := hc.Do(req)
	if err != nil {
		return wrap(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return wrap(fmt.Errorf("GET /subjects: HTTP %d", resp.StatusCode))
	}
	return nil
}
