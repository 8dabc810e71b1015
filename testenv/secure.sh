# secure.sh: the secured side of the test environment, sourced by testenv.sh.
# A CA and certificates made at start (openssl, keytool) in every store
# format Java users have; the broker's extra TLS and SASL listeners; an OAuth
# token endpoint (itest-oauth) whose tokens the broker validates with Kafka's
# OIDC validator; and nginx serving the registry over TLS with basic auth.
# Secrets here are test values, also known to internal/itest.
# shellcheck shell=bash

PKI=$STATE/pki
STORE_PW=test-store-pw   # every JKS / PKCS12 store and its keys
KEY_PW=test-key-pw       # the encrypted PEM client key
SASL_USER=sink SASL_PW=sink-secret               # SCRAM-SHA-512 and PLAIN, also the registry's basic auth
OAUTH_CLIENT=sink OAUTH_SECRET=sink-oauth-secret # client credentials
OAUTH_ADDR=127.0.0.1:8095
OAUTH_LIFETIME=${TESTENV_OAUTH_LIFETIME:-20s}    # short, so token renewal happens within a test

# ---------------------------------------------------------------- certificates

# leaf <name> <subjectAltName> <extendedKeyUsage> [expired]: key and
# certificate signed by the test CA; expired ones were valid for a day in 2024.
leaf() {
  local name=$1 san=$2 eku=$3 ext=$PKI/$1.ext
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\nbasicConstraints=CA:FALSE\n' "$san" "$eku" >"$ext"
  openssl req -new -newkey rsa:2048 -nodes -keyout "$PKI/$name.key" -out "$PKI/$name.csr" -subj "/CN=$name" 2>/dev/null
  if [ "${4:-}" = expired ]; then
    openssl ca -batch -config "$PKI/ca.cnf" -cert "$PKI/ca.pem" -keyfile "$PKI/ca.key" -in "$PKI/$name.csr" \
      -out "$PKI/$name.pem" -extfile "$ext" -startdate 20240101000000Z -enddate 20240102000000Z -notext 2>/dev/null
  else
    openssl x509 -req -in "$PKI/$name.csr" -CA "$PKI/ca.pem" -CAkey "$PKI/ca.key" -CAcreateserial \
      -days 7 -sha256 -extfile "$ext" -out "$PKI/$name.pem" 2>/dev/null
  fi
  # PKCS12 with the chain, as the broker's key stores.
  openssl pkcs12 -export -name "$name" -inkey "$PKI/$name.key" -in "$PKI/$name.pem" -certfile "$PKI/ca.pem" \
    -out "$PKI/$name.p12" -passout "pass:$STORE_PW"
}

ca() { # ca <file prefix> <common name>
  openssl req -x509 -newkey rsa:2048 -nodes -keyout "$PKI/$1.key" -out "$PKI/$1.pem" -days 7 -sha256 -subj "/CN=$2" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
}

write_ca_cnf() { # for `openssl ca`, the one way OpenSSL 3.0 sets a past validity
  mkdir -p "$PKI/newcerts"
  : >"$PKI/index.txt"
  echo 1000 >"$PKI/serial"
  cat >"$PKI/ca.cnf" <<EOF
[ ca ]
default_ca = test
[ test ]
database = $PKI/index.txt
new_certs_dir = $PKI/newcerts
serial = $PKI/serial
default_md = sha256
policy = any
unique_subject = no
[ any ]
commonName = supplied
EOF
}

# make_pki: the CA, an untrusted second CA, the broker's certificate
# (127.0.0.1, localhost), one for another host name, an expired one, and the
# client's, with the client stores in PEM (plain and encrypted), PKCS12 and
# JKS and the trust stores in PEM, PKCS12 and JKS.
make_pki() {
  [ -f "$PKI/.done" ] && return
  local t0=$SECONDS keytool
  keytool=$(dirname "$(readlink -f "$(command -v java)")")/keytool
  rm -rf "$PKI"; mkdir -p "$PKI"
  ca ca "hdfs-sink test CA"
  ca other-ca "hdfs-sink untrusted CA"
  write_ca_cnf
  leaf broker "IP:127.0.0.1,DNS:localhost" serverAuth
  leaf badhost "DNS:elsewhere.invalid" serverAuth
  leaf expired "IP:127.0.0.1,DNS:localhost" serverAuth expired
  leaf client "DNS:sink" clientAuth
  cat "$PKI/broker.pem" "$PKI/ca.pem" >"$PKI/broker-chain.pem"
  cat "$PKI/client.key" "$PKI/client.pem" "$PKI/ca.pem" >"$PKI/client-keystore.pem"
  openssl pkcs8 -topk8 -v2 aes-256-cbc -in "$PKI/client.key" -passout "pass:$KEY_PW" -out "$PKI/client-enc.key"
  cat "$PKI/client-enc.key" "$PKI/client.pem" "$PKI/ca.pem" >"$PKI/client-keystore-enc.pem"
  for t in JKS PKCS12; do
    "$keytool" -importcert -noprompt -alias ca -file "$PKI/ca.pem" -storetype "$t" \
      -keystore "$PKI/truststore.${t,,}" -storepass "$STORE_PW" >/dev/null 2>&1 || die "keytool could not write a $t trust store"
  done
  "$keytool" -importkeystore -noprompt -srckeystore "$PKI/client.p12" -srcstoretype PKCS12 -srcstorepass "$STORE_PW" \
    -destkeystore "$PKI/client.jks" -deststoretype JKS -deststorepass "$STORE_PW" -destkeypass "$STORE_PW" >/dev/null 2>&1 ||
    die "keytool could not write the client's JKS key store"
  mv "$PKI/truststore.pkcs12" "$PKI/truststore.p12"
  printf '%s:%s\n' "$SASL_USER" "$(openssl passwd -apr1 "$SASL_PW")" >"$PKI/htpasswd"
  touch "$PKI/.done"
  log "certificates and stores made in $PKI in $((SECONDS - t0))s"
}

# ---------------------------------------------------------------- Kafka

# Secured listeners beside PLAINTEXT 9092 (and CONTROLLER 9093), which stay
# as they are; see testenv/README.md for what each one is for.
SECURE_LISTENERS="SSL://127.0.0.1:9094,MTLS://127.0.0.1:9095,SASL_SSL://127.0.0.1:9096,SASL_PLAINTEXT://127.0.0.1:9097,BADHOST://127.0.0.1:9098,EXPIRED://127.0.0.1:9099"
SECURE_PORTS=(9094 9095 9096 9097 9098 9099)

kafka_secure_properties() {
  cat <<EOF
ssl.keystore.type=PKCS12
ssl.keystore.location=$PKI/broker.p12
ssl.keystore.password=$STORE_PW
ssl.key.password=$STORE_PW
listener.name.mtls.ssl.client.auth=required
listener.name.mtls.ssl.truststore.type=PEM
listener.name.mtls.ssl.truststore.location=$PKI/ca.pem
listener.name.badhost.ssl.keystore.location=$PKI/badhost.p12
listener.name.expired.ssl.keystore.location=$PKI/expired.p12
listener.name.sasl_ssl.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512,OAUTHBEARER
listener.name.sasl_plaintext.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PW";
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_$SASL_USER="$SASL_PW";
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;
listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class=org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler
listener.name.sasl_ssl.oauthbearer.connections.max.reauth.ms=10000
sasl.oauthbearer.jwks.endpoint.url=http://$OAUTH_ADDR/jwks
sasl.oauthbearer.expected.audience=hdfs-sink-test
sasl.oauthbearer.expected.issuer=http://$OAUTH_ADDR
EOF
}

# The broker may fetch the JWKS only from URLs listed here (Kafka 4).
KAFKA_SECURE_JVM=(-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls="http://$OAUTH_ADDR/jwks")
KAFKA_SCRAM_FORMAT=(--add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$SASL_PW]")

# ---------------------------------------------------------------- OAuth

start_oauth() {
  if ! alive oauth; then
    require_ports_free oauth 8095
    fresh_log oauth
    launch oauth "$STATE/bin/itest-oauth" -addr "$OAUTH_ADDR" -clients "$OAUTH_CLIENT:$OAUTH_SECRET" -lifetime "$OAUTH_LIFETIME"
  fi
  wait_ready oauth oauth
  touch "$RUN/oauth.ready"
}

# ---------------------------------------------------------------- registry over TLS

# nginx in front of Apicurio: 8443 is TLS with basic auth, 8444 TLS that
# requires a client certificate. One process (master_process off), in the
# foreground, so launch and stop track it like the JVMs.
write_nginx_conf() {
  local d=$STATE/registry-tls t
  mkdir -p "$d"
  for t in body proxy fastcgi uwsgi scgi; do mkdir -p "$d/tmp/$t"; done
  cat >"$d/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $d/nginx.pid;
error_log $LOGS/registry-tls.log info;
events { worker_connections 256; }
http {
  access_log $LOGS/registry-tls.access.log;
  client_body_temp_path $d/tmp/body;
  proxy_temp_path $d/tmp/proxy;
  fastcgi_temp_path $d/tmp/fastcgi;
  uwsgi_temp_path $d/tmp/uwsgi;
  scgi_temp_path $d/tmp/scgi;
  ssl_certificate $PKI/broker-chain.pem;
  ssl_certificate_key $PKI/broker.key;
  ssl_protocols TLSv1.2 TLSv1.3;
  server {
    listen 127.0.0.1:8443 ssl;
    auth_basic "schema registry";
    auth_basic_user_file $PKI/htpasswd;
    location / { proxy_pass http://127.0.0.1:8081; }
  }
  server {
    listen 127.0.0.1:8444 ssl;
    ssl_client_certificate $PKI/ca.pem;
    ssl_verify_client on;
    location / { proxy_pass http://127.0.0.1:8081; }
  }
}
EOF
}

start_registry_tls() {
  if alive registry-tls; then wait_ready registry-tls registry-tls; return; fi
  require_ports_free registry-tls 8443 8444
  fresh_log registry-tls
  write_nginx_conf
  launch registry-tls "$NGINX" -p "$STATE/registry-tls" -c "$STATE/registry-tls/nginx.conf"
  wait_ready registry-tls registry-tls
}

# marker <svc>: what a service's command line holds that proves it is ours.
marker() {
  case $1 in
    registry-tls) echo "$STATE/registry-tls/nginx.conf" ;;
    oauth) echo "$STATE/bin/itest-oauth " ;;
    *) echo "-Dhdfs_sink_testenv=$1 " ;;
  esac
}

write_secure_env() { # what internal/itest reads about the secured services
  cat <<EOF
HDFS_SINK_TESTENV_PKI=$PKI
HDFS_SINK_TESTENV_OAUTH_URL=http://$OAUTH_ADDR
EOF
}
