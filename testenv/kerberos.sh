# kerberos.sh: the Kerberos profile of testenv.sh (sourced by it, not run):
# an MIT KDC on loopback, a Kerberized HDFS (its own NameNode and DataNode),
# a Kerberized Hive Metastore and a Kafka broker with a GSSAPI listener, all
# beside the plain services and on ports of their own.
#
# Realm EXAMPLE.COM. Every service principal is <service>/localhost: with
# everything on 127.0.0.1, "localhost" is the one host name that resolves
# (forward and back) in any network namespace, and clients build SPNs from
# the host they dial, so tests dial localhost, not 127.0.0.1.
#
# The client principal sink@EXAMPLE.COM gets tickets of KRB_TICKET_LIFETIME
# (2 minutes) so that every test that runs longer exercises renewal; the
# service principals get a day, so the services themselves never need to.

KRB_REALM=EXAMPLE.COM
KRB_PORT=10088      # the KDC (UDP and TCP)
KRB_SKEW_PORT=10089 # the same database served with a clock 15 minutes ahead
KRB_TICKET_LIFETIME=${KRB_TICKET_LIFETIME:-2 minutes}
KRB_RENEW_LIFETIME=${KRB_RENEW_LIFETIME:-10 minutes}
# Ports of the Kerberized services (the plain ones keep theirs).
KNN_RPC=8220 KNN_HTTP=9970
KDN_DATA=9966 KDN_IPC=9967 KDN_HTTP=9964
KHMS_PORT=9183
KKAFKA_SASL=9192 KKAFKA_CONTROLLER=9193 KKAFKA_INTERNAL=9195

KRB_SERVICES=(kdc kdc-skew krb-namenode krb-datanode krb-hms krb-kafka)
KRB_PROCESSES=(krb-hms krb-kafka krb-datanode krb-namenode kdc-skew kdc) # stop order

krb_dir() { echo "$STATE/krb"; }
krb_conf() { echo "$STATE/krb/krb5.conf"; }
keytab() { echo "$STATE/krb/keytabs/$1.keytab"; }

krb_prereqs() { # echoes the Debian packages the profile still needs
  command -v krb5kdc >/dev/null || [ -x /usr/sbin/krb5kdc ] || echo krb5-kdc
  command -v kadmin.local >/dev/null || [ -x /usr/sbin/kadmin.local ] || echo krb5-admin-server
  command -v kinit >/dev/null || echo krb5-user
}

write_krb5_conf() { # <file> <kdc port>: the client side, for Go and Java alike
  cat >"$1" <<EOF
[libdefaults]
  default_realm = $KRB_REALM
  dns_lookup_kdc = false
  dns_lookup_realm = false
  rdns = false
  udp_preference_limit = 1
  ticket_lifetime = 1d
  renew_lifetime = 7d
  forwardable = true
[realms]
  $KRB_REALM = {
    kdc = 127.0.0.1:$2
  }
[domain_realm]
  localhost = $KRB_REALM
  .localhost = $KRB_REALM
EOF
}

write_kdc_conf() { # <file> <port>
  local d
  d=$(krb_dir)
  cat >"$1" <<EOF
[kdcdefaults]
  kdc_listen = 127.0.0.1:$2
  kdc_tcp_listen = 127.0.0.1:$2
[realms]
  $KRB_REALM = {
    database_name = $d/db/principal
    key_stash_file = $d/db/stash
    acl_file = $d/kadm5.acl
    max_life = 1d
    max_renewable_life = 7d
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
EOF
}

kadmin() { KRB5_CONFIG=$(krb_conf) KRB5_KDC_PROFILE=$(krb_dir)/kdc.conf /usr/sbin/kadmin.local -r "$KRB_REALM" -q "$1" >>"$LOGS/kdc-setup.log" 2>&1; }

# krb_setup: the realm, its principals and keytabs, once per state.
krb_setup() {
  local d
  d=$(krb_dir)
  [ -f "$d/.done" ] && return 0
  rm -rf "$d"; mkdir -p "$d/db" "$d/keytabs" "$LOGS"
  chmod 700 "$d/keytabs"
  write_krb5_conf "$d/krb5.conf" "$KRB_PORT"
  write_krb5_conf "$d/krb5-skew.conf" "$KRB_SKEW_PORT"
  write_krb5_conf "$d/krb5-down.conf" 1 # nothing listens there: "KDC unreachable"
  write_kdc_conf "$d/kdc.conf" "$KRB_PORT"
  write_kdc_conf "$d/kdc-skew.conf" "$KRB_SKEW_PORT"
  : >"$d/kadm5.acl"
  log "creating Kerberos realm $KRB_REALM"
  # The master password only protects the test database's stash.
  KRB5_CONFIG=$d/krb5.conf KRB5_KDC_PROFILE=$d/kdc.conf /usr/sbin/kdb5_util create -s -r "$KRB_REALM" -P testenv-master \
    >>"$LOGS/kdc-setup.log" 2>&1 || { log "kdb5_util create failed (see $LOGS/kdc-setup.log)"; return 1; }
  krb_principals || return 1
  chmod 600 "$d"/keytabs/*.keytab
  touch "$d/.done"
}

krb_principals() {
  local p host
  host=$(hostname | tr 'A-Z' 'a-z')
  for p in nn/localhost dn/localhost HTTP/localhost hive/localhost kafka/localhost; do
    kadmin "addprinc -randkey $p" || return 1
  done
  kadmin "addprinc -randkey -maxlife \"$KRB_TICKET_LIFETIME\" -maxrenewlife \"$KRB_RENEW_LIFETIME\" sink" || return 1
  kadmin "addprinc -randkey -maxlife \"$KRB_TICKET_LIFETIME\" -maxrenewlife \"$KRB_RENEW_LIFETIME\" sink/$host" || return 1
  kadmin "ktadd -k $(keytab hdfs) -norandkey nn/localhost dn/localhost HTTP/localhost" || return 1
  kadmin "ktadd -k $(keytab hive) -norandkey hive/localhost" || return 1
  kadmin "ktadd -k $(keytab kafka) -norandkey kafka/localhost" || return 1
  # A keytab whose keys were replaced since (kvno behind): "wrong keytab".
  kadmin "ktadd -k $(keytab sink-stale) sink" || return 1
  kadmin "ktadd -k $(keytab sink) sink" || return 1
  kadmin "ktadd -k $(keytab sink-host) -norandkey sink/$host" || return 1
  # A keytab for a principal the KDC no longer has.
  kadmin "addprinc -randkey ghost" && kadmin "ktadd -k $(keytab ghost) ghost" && kadmin "delprinc -force ghost"
}

# The KDC is not a JVM: exec -a puts the marker alive() looks for into argv[0].
start_kdc_named() { # <svc> <kdc.conf> <port> [krb5kdc args]
  local svc=$1 conf=$2 port=$3; shift 3
  if alive "$svc"; then return 0; fi
  require_ports_free "$svc" "$port"
  fresh_log "$svc"
  launch "$svc" env KRB5_CONFIG="$(krb_conf)" KRB5_KDC_PROFILE="$conf" \
    bash -c 'exec -a "krb5kdc -Dhdfs_sink_testenv=$0 " /usr/sbin/krb5kdc "$@"' "$svc" -n -r "$KRB_REALM" "$@"
  local i
  for ((i = 0; i < 50; i++)); do
    port_free "$port" || return 0
    alive "$svc" || fail "$svc"
    sleep 0.1
  done
  fail "$svc"
}

start_kdcs() {
  krb_setup || fail kdc
  start_kdc_named kdc "$(krb_dir)/kdc.conf" "$KRB_PORT"
  # -T: the KDC's clock runs 15 minutes ahead, beyond the 5-minute skew
  # every Kerberos implementation allows.
  start_kdc_named kdc-skew "$(krb_dir)/kdc-skew.conf" "$KRB_SKEW_PORT" -T 900
}

# Java's Kerberos reads the realm from krb5.conf; Hadoop's KerberosUtil
# reflects into sun.security.krb5 for it.
krb_jvm() {
  echo "-Djava.security.krb5.conf=$(krb_conf) -Dsun.security.krb5.disableReferrals=true --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED --add-opens=java.security.jgss/sun.security.krb5=ALL-UNNAMED"
}

krb_prop() { echo "  <property><name>$1</name><value>$2</value></property>"; }

# write_krb_hadoop_conf <dir> <data transfer protection>: what the Kerberized
# NameNode, DataNode and HMS read. Clients get their own (see krb_client_conf).
write_krb_hadoop_conf() {
  local c=$1 dtp=$2
  mkdir -p "$c"
  {
    echo "<configuration>"
    krb_prop fs.defaultFS "hdfs://localhost:$KNN_RPC"
    krb_prop hadoop.security.authentication kerberos
    krb_prop hadoop.security.authorization false
    krb_prop hadoop.rpc.protection "${KRB_RPC_PROTECTION:-privacy}"
    krb_prop hadoop.proxyuser.hive.hosts '*'
    krb_prop hadoop.proxyuser.hive.groups '*'
    echo "</configuration>"
  } >"$c/core-site.xml"
  {
    echo "<configuration>"
    krb_prop dfs.replication 1
    krb_prop dfs.blocksize 16777216
    krb_prop dfs.namenode.name.dir "$STATE/krb-hdfs/name"
    krb_prop dfs.datanode.data.dir "$STATE/krb-hdfs/data"
    krb_prop dfs.permissions.enabled false
    krb_prop dfs.namenode.rpc-address "localhost:$KNN_RPC"
    krb_prop dfs.namenode.http-address "127.0.0.1:$KNN_HTTP"
    krb_prop dfs.namenode.secondary.http-address 127.0.0.1:9968
    krb_prop dfs.namenode.datanode.registration.ip-hostname-check false
    krb_prop dfs.datanode.hostname localhost
    krb_prop dfs.datanode.address "127.0.0.1:$KDN_DATA"
    krb_prop dfs.datanode.ipc.address "127.0.0.1:$KDN_IPC"
    krb_prop dfs.datanode.http.address "127.0.0.1:$KDN_HTTP"
    krb_prop dfs.namenode.safemode.extension 0
    krb_prop dfs.namenode.safemode.min.datanodes 1
    krb_prop dfs.client.block.write.replace-datanode-on-failure.enable false
    krb_prop dfs.webhdfs.enabled false
    krb_prop dfs.block.access.token.enable true
    # krb-encrypt on: the older key-based data transfer encryption, with
    # block keys rolled every minute and data encryption keys living one
    # (the shortest Hadoop allows), so a key outlives its block key within
    # minutes instead of the default 10 hours.
    if [ "$(cat "$RUN/krb-encrypt" 2>/dev/null)" = on ]; then
      krb_prop dfs.encrypt.data.transfer true
      krb_prop dfs.block.access.key.update.interval 1
      krb_prop dfs.block.access.token.lifetime 1
    fi
    # privacy-digest: privacy by DIGEST-MD5's own RC4 wrapping, what a
    # DataNode without cipher suites gives; otherwise by AES/CTR, as
    # production clusters set it.
    krb_prop dfs.data.transfer.protection "${dtp%-digest}"
    [ "$dtp" = privacy-digest ] || krb_prop dfs.encrypt.data.transfer.cipher.suites AES/CTR/NoPadding
    # SASL on the data port instead of jsvc and privileged ports; Hadoop
    # would also want HTTPS_ONLY for the DataNode's web UI, which no test
    # uses, so its testing switch stands in for a keystore.
    krb_prop ignore.secure.ports.for.testing true
    krb_prop dfs.namenode.kerberos.principal "nn/_HOST@$KRB_REALM"
    krb_prop dfs.namenode.keytab.file "$(keytab hdfs)"
    krb_prop dfs.datanode.kerberos.principal "dn/_HOST@$KRB_REALM"
    krb_prop dfs.datanode.keytab.file "$(keytab hdfs)"
    krb_prop dfs.web.authentication.kerberos.principal "HTTP/_HOST@$KRB_REALM"
    krb_prop dfs.web.authentication.kerberos.keytab "$(keytab hdfs)"
    echo "</configuration>"
  } >"$c/hdfs-site.xml"
  write_hadoop_extras "$c"
}

# krb_client_conf <dir> <data transfer protection>: a hadoop.conf.dir as an
# edge node has it: Kerberos on, the NameNode's principal, the protection.
krb_client_conf() {
  mkdir -p "$1"
  {
    echo "<configuration>"
    krb_prop fs.defaultFS "hdfs://localhost:$KNN_RPC"
    krb_prop hadoop.security.authentication kerberos
    krb_prop hadoop.rpc.protection "${KRB_RPC_PROTECTION:-privacy}"
    echo "</configuration>"
  } >"$1/core-site.xml"
  {
    echo "<configuration>"
    krb_prop dfs.namenode.kerberos.principal "nn/_HOST@$KRB_REALM"
    krb_prop dfs.data.transfer.protection "$2"
    krb_prop dfs.encrypt.data.transfer.cipher.suites AES/CTR/NoPadding
    echo "</configuration>"
  } >"$1/hdfs-site.xml"
}

# krb_spark_conf <dir>: HADOOP_CONF_DIR for the Spark driver. Its UGI must
# see Kerberos in core-site.xml when it first initialises (spark.hadoop.*
# comes too late for it); the ticket is kinit's (KRB5CCNAME).
krb_spark_conf() {
  KRB_RPC_PROTECTION=privacy,authentication krb_client_conf "$1" "${KRB_DTP:-privacy}"
  {
    echo "<configuration>"
    krb_prop hive.metastore.uris "thrift://localhost:$KHMS_PORT"
    krb_prop hive.metastore.sasl.enabled true
    krb_prop hive.metastore.kerberos.principal "hive/localhost@$KRB_REALM"
    echo "</configuration>"
  } >"$1/hive-site.xml"
  # Hive's input formats ask for HDFS delegation tokens naming the YARN
  # ResourceManager as renewer, and fail without one ("Can't get Master
  # Kerberos principal for use as renewer"); no YARN runs here.
  sed -i "s#</configuration>#$(krb_prop yarn.resourcemanager.principal "rm/localhost@$KRB_REALM")\n</configuration>#" "$1/core-site.xml"
}

krb_hdfs_check() { # the readiness probe, as the sink principal
  "$CHECK" -timeout 10s krb-hdfs >/dev/null 2>&1
}

start_krb_namenode() {
  local c=$STATE/krb-hadoop-conf
  write_krb_hadoop_conf "$c" "${KRB_DTP:-privacy}"
  local cp="$c:$HDFS_LIB/*" jvm
  read -r -a jvm <<<"$(krb_jvm)"
  jvm+=("${OPENS[@]}" "${FAST[@]}" -Dhadoop.log.dir="$LOGS")
  alive krb-namenode && return 0
  require_ports_free krb-namenode "$KNN_RPC" "$KNN_HTTP"
  fresh_log krb-namenode
  if [ ! -f "$STATE/krb-hdfs/name/current/VERSION" ]; then
    java "${jvm[@]}" -cp "$cp" org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive \
      >>"$LOGS/krb-namenode.log" 2>&1 || fail krb-namenode
  fi
  launch krb-namenode java -Dhdfs_sink_testenv=krb-namenode -Xmx384m "${jvm[@]}" -cp "$cp" \
    org.apache.hadoop.hdfs.server.namenode.NameNode
}

# start_krb_datanode [protection]: the DataNode has its own conf dir so a
# test can restart it alone with another dfs.data.transfer.protection.
start_krb_datanode() {
  local c=$STATE/krb-dn-conf dtp=${1:-${KRB_DTP:-privacy}}
  write_krb_hadoop_conf "$c" "$dtp"
  local cp="$c:$HDFS_LIB/*" jvm
  read -r -a jvm <<<"$(krb_jvm)"
  jvm+=("${OPENS[@]}" "${FAST[@]}" -Dhadoop.log.dir="$LOGS")
  alive krb-datanode && return 0
  require_ports_free krb-datanode "$KDN_DATA" "$KDN_IPC" "$KDN_HTTP"
  fresh_log krb-datanode
  echo "$dtp" >"$RUN/krb-datanode.protection"
  launch krb-datanode java -Dhdfs_sink_testenv=krb-datanode -Xmx256m "${jvm[@]}" -cp "$cp" \
    org.apache.hadoop.hdfs.server.datanode.DataNode
}

wait_krb_hdfs() {
  local deadline=$((SECONDS + TIMEOUT))
  while ((SECONDS < deadline)); do
    alive krb-namenode || fail krb-namenode
    alive krb-datanode || fail krb-datanode
    if krb_hdfs_check; then return 0; fi
    sleep 1
  done
  "$CHECK" -timeout 10s krb-hdfs >&2 || true
  fail krb-datanode
}

start_krb_hdfs() {
  # A krb-encrypt on left by an interrupted test must not outlive a restart.
  alive krb-namenode || alive krb-datanode || rm -f "$RUN/krb-encrypt"
  krb_client_conf "$STATE/krb-client-conf" "${KRB_DTP:-privacy}"
  krb_spark_conf "$STATE/krb-spark-conf"
  start_krb_namenode
  start_krb_datanode
  wait_krb_hdfs
}

write_krb_hms_conf() {
  local c=$STATE/krb-hms-conf
  mkdir -p "$c"
  # hadoop.rpc.protection is both the QOP the HMS offers its clients and
  # the one it asks of the NameNode: privacy only, as on a cluster that
  # encrypts all RPC.
  krb_client_conf "$c" "${KRB_DTP:-privacy}"
  {
    echo "<configuration>"
    krb_prop metastore.thrift.uris "thrift://localhost:$KHMS_PORT"
    krb_prop metastore.thrift.port "$KHMS_PORT"
    krb_prop metastore.warehouse.dir "hdfs://localhost:$KNN_RPC/warehouse"
    krb_prop javax.jdo.option.ConnectionURL "jdbc:derby:;databaseName=$STATE/krb-hms/metastore_db;create=true"
    krb_prop javax.jdo.option.ConnectionDriverName org.apache.derby.jdbc.EmbeddedDriver
    krb_prop metastore.task.threads.always org.apache.hadoop.hive.metastore.events.EventCleanerTask
    krb_prop metastore.expression.proxy org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy
    krb_prop metastore.sasl.enabled true
    # No _HOST: HMS 3.1 would substitute the machine's name, not localhost.
    krb_prop metastore.kerberos.principal "hive/localhost@$KRB_REALM"
    krb_prop metastore.kerberos.keytab.file "$(keytab hive)"
    echo "</configuration>"
  } >"$c/metastore-site.xml"
  write_log4j2 "$c/log4j2.properties"
}

start_krb_hms() {
  alive krb-hms && { wait_ready krb-hms krb-hms; return; }
  require_ports_free krb-hms "$KHMS_PORT"
  fresh_log krb-hms
  write_krb_hms_conf
  local cp="$STATE/krb-hms-conf:$METASTORE_HOME/lib/*:$HMS_HADOOP_LIB/*" jvm
  read -r -a jvm <<<"$(krb_jvm)"
  jvm+=("${OPENS[@]}" "${FAST[@]}" -Dlog4j2.configurationFile="$STATE/krb-hms-conf/log4j2.properties"
    -Dderby.stream.error.file="$LOGS/krb-derby.log")
  export METASTORE_HOME
  mkdir -p "$STATE/krb-hms"
  if [ ! -d "$STATE/krb-hms/metastore_db" ]; then
    java "${jvm[@]}" -cp "$cp" org.apache.hadoop.hive.metastore.tools.MetastoreSchemaTool \
      -initSchema -dbType derby >>"$LOGS/krb-hms.log" 2>&1 || { rm -rf "$STATE/krb-hms/metastore_db"; fail krb-hms; }
  fi
  launch krb-hms java -Dhdfs_sink_testenv=krb-hms -Xmx384m "${jvm[@]}" -cp "$cp" \
    org.apache.hadoop.hive.metastore.HiveMetaStore -p "$KHMS_PORT"
  wait_ready krb-hms krb-hms
}

# A broker of its own (not a listener on the plain one, whose listeners the
# TLS/SASL work changes): GSSAPI on localhost:9192, and a plaintext listener
# for broker-internal traffic and the tests' producers.
start_krb_kafka() {
  alive krb-kafka && { wait_ready krb-kafka krb-kafka; return; }
  require_ports_free krb-kafka "$KKAFKA_SASL" "$KKAFKA_CONTROLLER" "$KKAFKA_INTERNAL"
  fresh_log krb-kafka
  local d=$STATE/krb-kafka
  mkdir -p "$d"
  cat >"$d/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$KKAFKA_CONTROLLER
listeners=SASL_PLAINTEXT://localhost:$KKAFKA_SASL,CONTROLLER://127.0.0.1:$KKAFKA_CONTROLLER,INTERNAL://127.0.0.1:$KKAFKA_INTERNAL
advertised.listeners=SASL_PLAINTEXT://localhost:$KKAFKA_SASL,INTERNAL://127.0.0.1:$KKAFKA_INTERNAL
controller.listener.names=CONTROLLER
inter.broker.listener.name=INTERNAL
listener.security.protocol.map=CONTROLLER:PLAINTEXT,INTERNAL:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT
sasl.enabled.mechanisms=GSSAPI
sasl.kerberos.service.name=kafka
listener.name.sasl_plaintext.gssapi.sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true keyTab="$(keytab kafka)" principal="kafka/localhost@$KRB_REALM";
EOF
  kafka_single_node_properties "$d" >>"$d/server.properties"
  write_log4j2 "$d/log4j2.properties"
  kafka_format_storage krb-kafka "$d"
  launch krb-kafka java -Dhdfs_sink_testenv=krb-kafka -Xms256m -Xmx384m "${FAST[@]}" \
    -Djava.security.krb5.conf="$(krb_conf)" -Dlog4j2.configurationFile="$d/log4j2.properties" \
    -cp "$KAFKA_LIB/*" kafka.Kafka "$d/server.properties"
  wait_ready krb-kafka krb-kafka
}

# start_kerberos: the whole profile. The KDC first; then HDFS, Kafka in
# parallel, and the HMS once HDFS is up (it creates its warehouse there).
start_kerberos() {
  start_kdcs
  local pids=() rc=0 p
  (start_krb_kafka) & pids+=($!)
  (start_krb_hdfs && start_krb_hms) & pids+=($!)
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return $rc
}

krb_write_env() {
  cat <<EOF
HDFS_SINK_TESTENV_KRB5_CONFIG=$(krb_conf)
HDFS_SINK_TESTENV_KRB_DIR=$(krb_dir)
HDFS_SINK_TESTENV_KRB_HADOOP_CONF=$STATE/krb-client-conf
HDFS_SINK_TESTENV_KRB_SPARK_CONF=$STATE/krb-spark-conf
HDFS_SINK_TESTENV_TESTENV_SH=$HERE/testenv.sh
EOF
}

# cmd_krb_encrypt <on|off>: restart the Kerberized NameNode and DataNode
# with dfs.encrypt.data.transfer on (short-lived keys, see
# write_krb_hadoop_conf) or off, and wait until they serve.
cmd_krb_encrypt() {
  case ${1:-} in on | off) ;; *) die "krb-encrypt: on or off" ;; esac
  cached_paths
  HDFS_LIB=$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")
  CHECK=$STATE/bin/itest-ready
  mkdir -p "$RUN"
  echo "$1" >"$RUN/krb-encrypt"
  stop krb-datanode
  stop krb-namenode
  start_krb_namenode
  start_krb_datanode "$(cat "$RUN/krb-datanode.protection" 2>/dev/null || echo privacy)"
  wait_krb_hdfs
  log "krb-hdfs serving with dfs.encrypt.data.transfer=$([ "$1" = on ] && echo true || echo false)"
}

# cmd_krb_datanode <protection>: restart the Kerberized DataNode alone with
# dfs.data.transfer.protection set to <protection>, and wait until it serves.
cmd_krb_datanode() {
  case ${1:-} in authentication | integrity | privacy | privacy-digest) ;; *) die "krb-datanode: authentication, integrity, privacy or privacy-digest (no AES cipher suites)" ;; esac
  cached_paths
  HDFS_LIB=$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")
  CHECK=$STATE/bin/itest-ready
  stop krb-datanode
  start_krb_datanode "$1"
  # Served = its first block report reached the NameNode, then a block
  # written and read back (the probe's client asks for privacy, which an
  # integrity DataNode refuses: there the block report is all).
  local deadline=$((SECONDS + TIMEOUT))
  until grep -q "Successfully sent block report" "$LOGS/krb-datanode.log"; do
    alive krb-datanode || fail krb-datanode
    ((SECONDS < deadline)) || fail krb-datanode
    sleep 0.5
  done
  [ "$1" = integrity ] || wait_krb_hdfs
  log "krb-datanode serving with dfs.data.transfer.protection=$1"
}
