#!/usr/bin/env bash
# testenv.sh: the real services the integration tests run against, as plain
# processes on 127.0.0.1 (no Docker): Kafka (KRaft), HDFS NameNode + DataNode,
# Hive Metastore 3.1 and 4.0 (Derby), Apicurio Registry (Confluent API) and
# a pyspark venv for read-back checks; beside them the secured side
# (secure.sh): TLS and SASL listeners on the same broker, an OAuth token
# endpoint, and the registry behind nginx with TLS and basic auth; and the
# Kerberos profile (testenv/kerberos.sh: a KDC, a Kerberized HDFS, Metastore
# and Kafka listener), unless TESTENV_KERBEROS=0; and the HA profile
# (testenv/ha.sh: an HDFS nameservice of two NameNodes, a JournalNode and
# three DataNodes with replication 3), unless TESTENV_HA=0.
#
#   testenv.sh up              download what is missing, start, health-check
#   testenv.sh down            stop what up started; wipe state unless KEEP=1
#   testenv.sh status          exit 1 and name every service that is down
#   testenv.sh logs <service>  tail a service's log (FOLLOW=1 to follow)
#   testenv.sh unit-tools      install what `make unit` runs beside go test (promtool)
#
# Versions: testenv/versions.env. Downloads: ~/.m2, pip's cache and
# $HDFS_SINK_TESTENV_CACHE (default ~/.cache/hdfs-sink-testenv).
# Runtime state, logs and PID files: <repo>/.testenv/.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
# shellcheck source=testenv/versions.env
source "$HERE/versions.env"

CACHE=${HDFS_SINK_TESTENV_CACHE:-$HOME/.cache/hdfs-sink-testenv}
STATE=${HDFS_SINK_TESTENV_STATE:-$ROOT/.testenv}
LOGS=$STATE/logs
RUN=$STATE/run
TIMEOUT=${TESTENV_TIMEOUT:-180} # seconds a service may take to become ready
STOP_GRACE=${TESTENV_STOP_GRACE:-20}

SERVICES=(kafka namenode datanode hms hms4 registry spark oauth registry-tls)
PROCESSES=(registry-tls hms hms4 registry kafka oauth datanode namenode) # stop order
KERBEROS=${TESTENV_KERBEROS:-1}
# shellcheck source=testenv/kerberos.sh
source "$HERE/kerberos.sh"
if [ "$KERBEROS" = 1 ]; then
  SERVICES+=("${KRB_SERVICES[@]}")
  PROCESSES=("${KRB_PROCESSES[@]:0:4}" "${PROCESSES[@]}" "${KRB_PROCESSES[@]:4}")
fi
HA=${TESTENV_HA:-1}
# shellcheck source=testenv/ha.sh
source "$HERE/ha.sh"
if [ "$HA" = 1 ]; then SERVICES+=("${HA_SERVICES[@]}"); fi
PROCESSES+=("${HA_PROCESSES[@]}") # down stops them whatever TESTENV_HA says now

DEP_PLUGIN=org.apache.maven.plugins:maven-dependency-plugin:$MAVEN_DEPENDENCY_PLUGIN
MVN_FLAGS=(-B -q -Dstyle.color=never)
FAST=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xss512k)
# Union of Hadoop's own Java 17 flags (HADOOP-19310) and Hive's (HIVE-26473).
OPENS=()
for p in java.base/java.lang java.base/java.lang.reflect java.base/java.io java.base/java.net \
  java.base/java.nio java.base/java.util java.base/java.util.concurrent \
  java.base/java.util.concurrent.atomic java.base/java.util.regex java.base/java.util.zip \
  java.base/java.math java.base/java.text java.base/sun.nio.ch java.base/sun.security.util \
  java.base/sun.security.x509 java.sql/java.sql; do
  OPENS+=("--add-opens=$p=ALL-UNNAMED")
done

log() { printf '[testenv %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

# shellcheck source=testenv/secure.sh
source "$HERE/secure.sh"

# ---------------------------------------------------------------- prerequisites

APT_UPDATED=0
apt_install() {
  command -v apt-get >/dev/null || die "need $* but apt-get is not available"
  if [ "$APT_UPDATED" = 0 ]; then
    log "apt-get update"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    APT_UPDATED=1
  fi
  log "apt-get install $*"
  # A package's install scripts must not start a system service (nginx
  # would take port 80): policy-rc.d says no, unless the machine has one.
  local policy=/usr/sbin/policy-rc.d ours=0 rc=0
  if [ ! -e "$policy" ]; then printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod +x "$policy" && ours=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 || rc=$?
  if [ "$ours" = 1 ]; then rm -f "$policy"; fi
  return $rc
}

java_major() { # java_major <java binary> -> major version or 0
  "$1" -XshowSettings:properties -version 2>&1 |
    awk -F'= ' '/java.specification.version/ {print $2; found=1} END {if (!found) print 0}' |
    cut -d. -f1
}

# find_java <min major>: the java on PATH if new enough, else the newest JDK
# under /usr/lib/jvm that is. Apicurio 3.3 needs 21+; Debian 12 has only 17,
# so it runs on the image's second (Temurin 25) JDK.
find_java() {
  local min=$1 j best="" bestv=0 v
  if command -v java >/dev/null && [ "$(java_major java)" -ge "$min" ]; then
    command -v java; return
  fi
  for j in /usr/lib/jvm/*/bin/java; do
    [ -x "$j" ] || continue
    v=$(java_major "$j")
    if [ "$v" -ge "$min" ] && [ "$v" -gt "$bestv" ]; then best=$j; bestv=$v; fi
  done
  [ -n "$best" ] && echo "$best"
}

ensure_prereqs() {
  local pkgs=()
  if ! command -v java >/dev/null || [ "$(java_major java)" -lt 17 ]; then pkgs+=(openjdk-17-jdk-headless); fi
  command -v mvn >/dev/null || pkgs+=(maven)
  command -v curl >/dev/null || pkgs+=(curl)
  command -v setsid >/dev/null || pkgs+=(util-linux)
  command -v python3 >/dev/null || pkgs+=(python3)
  command -v openssl >/dev/null || pkgs+=(openssl)
  [ -x /usr/sbin/nginx ] || command -v nginx >/dev/null || pkgs+=(nginx-light)
  # The fault harness (tools/chaos/) puts the daemon in a network namespace of its
  # own and cuts it off with iptables and tc.
  command -v ip >/dev/null || pkgs+=(iproute2)
  command -v iptables >/dev/null || pkgs+=(iptables)
  if ! python3 -c 'import ensurepip, venv' 2>/dev/null; then pkgs+=(python3-venv); fi
  # The metrics tests scrape the daemon with a real Prometheus and lint with
  # promtool (both in Debian's prometheus package).
  if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then pkgs+=(prometheus); fi
  if [ "$KERBEROS" = 1 ]; then mapfile -t -O "${#pkgs[@]}" pkgs < <(krb_prereqs); fi
  if [ ${#pkgs[@]} -gt 0 ]; then apt_install "${pkgs[@]}"; fi
  command -v go >/dev/null || die "go is required (the readiness checks are Go programs)"
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
  REGISTRY_JAVA=${REGISTRY_JAVA:-$(find_java 21 || true)}
  [ -n "$REGISTRY_JAVA" ] || die "Apicurio Registry $APICURIO_VERSION needs Java 21+; none found (set REGISTRY_JAVA=/path/to/java)"
}

# unit_tools installs what the unit step runs beside go test: promtool
# (Debian's prometheus package), for the test of the shipped alert rules
# (daemon/outage_test.go). `make unit` calls it, so a fresh machine has it.
unit_tools() {
  command -v promtool >/dev/null || apt_install prometheus
}

# ---------------------------------------------------------------- downloads

# Maven 3.8 prints colour resets even with -q and -Dstyle.color=never.
strip_ansi() { sed 's/\x1b\[[0-9;]*m//g'; }

# fetch_pom <name> <maven -D args...>: copy one throwaway pom's runtime classpath
# into a cache dir keyed by the versions and the pom's content.
fetch_pom() {
  local name=$1; shift
  local key dir
  key=$(cat "$HERE/poms/$name/pom.xml" <(printf '%s\n' "$@") | sha1sum | cut -c1-10)
  dir=$CACHE/$name-$key
  if [ ! -f "$dir/.done" ]; then
    log "downloading $name classpath ($*)"
    rm -rf "$dir"
    (cd "$HERE/poms/$name" && mvn "${MVN_FLAGS[@]}" "$DEP_PLUGIN:copy-dependencies" -DincludeScope=runtime \
      -DoutputDirectory="$dir/lib" "$@" 2>&1 | strip_ansi >&2) || die "maven could not resolve the $name classpath"
    touch "$dir/.done"
  fi
  echo "$dir/lib"
}

# fetch_artifact <g:a:v:type[:classifier]>: one file into $CACHE/dl.
fetch_artifact() {
  local coords=$1 a v t c file
  IFS=: read -r _ a v t c <<<"$coords"
  file=$CACHE/dl/$a-$v${c:+-$c}.$t
  if [ ! -s "$file" ]; then
    log "downloading $coords"
    mkdir -p "$CACHE/dl"
    (cd "$HERE/poms/fetch" && mvn "${MVN_FLAGS[@]}" "$DEP_PLUGIN:copy" -Dartifact="$coords" \
      -DoutputDirectory="$CACHE/dl" 2>&1 | strip_ansi >&2) || die "maven could not fetch $coords"
  fi
  echo "$file"
}

# unpack <tarball> <dir>: idempotent extraction into the cache.
unpack() {
  if [ ! -f "$2/.done" ]; then
    rm -rf "$2"; mkdir -p "$2"
    tar -xzf "$1" -C "$2"
    touch "$2/.done"
  fi
}

fetch_all() {
  mkdir -p "$CACHE"
  KAFKA_LIB=$(fetch_pom kafka -Dkafka.version="$KAFKA_VERSION" -Dkafka.scala="$KAFKA_SCALA" -Dlog4j.version="$LOG4J_VERSION")
  # The storage tool's home moved in some proposals (KAFKA-14585); fail clearly if it does.
  python3 -c 'import sys, zipfile; sys.exit("kafka/tools/StorageTool.class" not in zipfile.ZipFile(sys.argv[1]).namelist())' \
    "$KAFKA_LIB/kafka_$KAFKA_SCALA-$KAFKA_VERSION.jar" ||
    die "kafka.tools.StorageTool not found in kafka_$KAFKA_SCALA-$KAFKA_VERSION.jar"
  HDFS_LIB=$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")
  HMS_HADOOP_LIB=$(fetch_pom hms-hadoop -Dhms.hadoop.version="$HMS_HADOOP_VERSION")
  HMS4_HADOOP_LIB=$(fetch_pom hms4-hadoop -Dhms.hadoop.version="$HMS_HADOOP_VERSION")

  local tgz
  tgz=$(fetch_artifact "org.apache.hive:hive-standalone-metastore:$HMS_VERSION:tar.gz:bin")
  unpack "$tgz" "$CACHE/hms-$HMS_VERSION"
  METASTORE_HOME=$CACHE/hms-$HMS_VERSION/apache-hive-metastore-$HMS_VERSION-bin
  # Hadoop 3.3 brings Guava 27; with both on a lib/* classpath the order is undefined.
  rm -f "$METASTORE_HOME"/lib/guava-19.0.jar
  # Hive 4 dropped get_table, which Spark's built-in Hive 2.3 client calls;
  # a second metastore on its own port tests the daemon against both.
  tgz=$(fetch_artifact "org.apache.hive:hive-standalone-metastore-server:$HMS4_VERSION:tar.gz:bin")
  unpack "$tgz" "$CACHE/hms-$HMS4_VERSION"
  METASTORE4_HOME=$CACHE/hms-$HMS4_VERSION/apache-hive-metastore-$HMS4_VERSION-bin
  rm -f "$METASTORE4_HOME"/lib/guava-22.0.jar # same reason, Hadoop 3.3.6 on the classpath

  tgz=$(fetch_artifact "io.apicurio:apicurio-registry-app:$APICURIO_VERSION:tar.gz:all")
  unpack "$tgz" "$CACHE/apicurio-$APICURIO_VERSION"
  APICURIO_JAR=$CACHE/apicurio-$APICURIO_VERSION/quarkus-run.jar

  SPARK_AVRO_JAR=$(fetch_artifact "org.apache.spark:spark-avro_$SPARK_SCALA:$PYSPARK_VERSION:jar")
  SPARK_VENV=$CACHE/pyspark-$PYSPARK_VERSION
  if [ ! -f "$SPARK_VENV/.done" ]; then
    log "creating pyspark $PYSPARK_VERSION venv"
    rm -rf "$SPARK_VENV"
    python3 -m venv "$SPARK_VENV" >&2
    "$SPARK_VENV/bin/pip" install -q "pyspark==$PYSPARK_VERSION" >&2 || die "pip install pyspark==$PYSPARK_VERSION failed"
    touch "$SPARK_VENV/.done"
  fi
}

# Resolve the cached paths without downloading (for status/logs/down).
cached_paths() {
  METASTORE_HOME=$CACHE/hms-$HMS_VERSION/apache-hive-metastore-$HMS_VERSION-bin
  METASTORE4_HOME=$CACHE/hms-$HMS4_VERSION/apache-hive-metastore-$HMS4_VERSION-bin
  SPARK_VENV=$CACHE/pyspark-$PYSPARK_VERSION
  SPARK_AVRO_JAR=$CACHE/dl/spark-avro_$SPARK_SCALA-$PYSPARK_VERSION.jar
}

# The readiness checks share their code with internal/itest.
build_checker() {
  CHECK=$STATE/bin/itest-ready
  (cd "$ROOT" && go build -o "$CHECK" ./internal/itest/cmd/itest-ready) || die "could not build the readiness checker"
  (cd "$ROOT" && go build -o "$STATE/bin/itest-oauth" ./internal/itest/cmd/itest-oauth) || die "could not build the OAuth test server"
}

# ---------------------------------------------------------------- processes

pidfile() { echo "$RUN/$1.pid"; }

# alive <svc>: the PID file names a live process that is still ours (the
# marker property guards against PID reuse).
alive() {
  local f pid cmdline i
  f=$(pidfile "$1")
  [ -f "$f" ] || return 1
  pid=$(cat "$f")
  [ -n "$pid" ] || return 1
  # An empty command line is a process inside execve (setsid becoming the
  # service: the new image has no arguments yet) or a zombie. Look again for
  # a moment rather than call a starting service dead: that race failed an
  # `up` once ("registry-tls exited" the second nginx was started).
  for ((i = 0; i < 20; i++)); do
    kill -0 "$pid" 2>/dev/null || return 1
    cmdline=$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)
    [ -n "$cmdline" ] && break
    sleep 0.05
  done
  grep -qF -- "$(marker "$1")" <<<"$cmdline"
}

# launch <svc> <command...>: start in a new session (own process group, so
# down can signal the JVM and any children) with stdin closed.
launch() {
  local svc=$1; shift
  mkdir -p "$RUN" "$LOGS"
  log "starting $svc"
  setsid "$@" >>"$LOGS/$svc.log" 2>&1 </dev/null &
  local pid=$! i
  echo "$pid" >"$(pidfile "$svc")"
  # Until the forked shell has exec'd setsid/java, its cmdline lacks the
  # marker and alive() would call it dead: wait for the exec.
  for ((i = 0; i < 100; i++)); do
    if alive "$svc" || ! kill -0 "$pid" 2>/dev/null; then return 0; fi
    sleep 0.05
  done
}

# fresh_log <svc>: a service started anew gets a new log (the previous run's
# is kept as <svc>.log.1).
fresh_log() {
  mkdir -p "$LOGS"
  [ -f "$LOGS/$1.log" ] && mv -f "$LOGS/$1.log" "$LOGS/$1.log.1"
  : >"$LOGS/$1.log"
}

# stop <svc>: SIGTERM the process group, wait, then SIGKILL it.
stop() {
  local svc=$1 pid i
  alive "$svc" || { rm -f "$(pidfile "$svc")"; return 0; }
  pid=$(cat "$(pidfile "$svc")")
  log "stopping $svc (pid $pid)"
  kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
  for ((i = 0; i < STOP_GRACE * 4; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.25
  done
  if kill -0 "$pid" 2>/dev/null; then
    log "$svc did not stop in ${STOP_GRACE}s: SIGKILL"
    kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 20; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  fi
  # Leftover children of the group (none expected for plain JVMs).
  kill -KILL -- "-$pid" 2>/dev/null || true
  rm -f "$(pidfile "$svc")"
}

# fail <svc>: name the service, show its log tail, give up.
fail() {
  log "ERROR: $1 failed to start; last lines of $LOGS/$1.log:"
  tail -n "${TAIL_LINES:-40}" "$LOGS/$1.log" >&2 2>/dev/null || true
  exit 1
}

# wait_ready <svc> <check args...>: run the Go checker until it passes, the
# timeout expires, or the process dies.
wait_ready() {
  local svc=$1; shift
  local deadline=$((SECONDS + TIMEOUT))
  while ((SECONDS < deadline)); do
    alive "$svc" || { log "$svc exited"; fail "$svc"; }
    if "$CHECK" -timeout 5s "$@" >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  "$CHECK" -timeout 5s "$@" >&2 || true
  fail "$svc"
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

require_ports_free() { # refuse to start over somebody else's server
  local svc=$1 p; shift
  for p in "$@"; do
    port_free "$p" || { log "ERROR: $svc failed to start: port $p is in use by a process testenv did not start"; exit 1; }
  done
}

# ---------------------------------------------------------------- services

write_log4j2() { # console-only log4j2 config (output goes to the service log)
  cat >"$1" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = %d{ISO8601} %p [%t] %c{1}: %m%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
EOF
}

start_kafka() {
  if alive kafka; then wait_ready kafka kafka; return; fi
  require_ports_free kafka 9092 9093 "${SECURE_PORTS[@]}"
  fresh_log kafka
  local d=$STATE/kafka
  mkdir -p "$d"
  cat >"$d/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093,$SECURE_LISTENERS
advertised.listeners=PLAINTEXT://127.0.0.1:9092,$SECURE_LISTENERS
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,BADHOST:SSL,EXPIRED:SSL
EOF
  kafka_single_node_properties "$d" >>"$d/server.properties"
  kafka_secure_properties >>"$d/server.properties"
  write_log4j2 "$d/log4j2.properties"
  kafka_format_storage kafka "$d" "${KAFKA_SCRAM_FORMAT[@]}"
  launch kafka java -Dhdfs_sink_testenv=kafka -Xms512m -Xmx512m "${FAST[@]}" "${KAFKA_SECURE_JVM[@]}" \
    -Dlog4j2.configurationFile="$d/log4j2.properties" -cp "$KAFKA_LIB/*" kafka.Kafka "$d/server.properties"
  wait_ready kafka kafka
  wait_ready kafka kafka-secure
}

# kafka_single_node_properties <dir>: the server.properties lines every
# one-broker test cluster has (its data under <dir>/data). Retention is
# off: tests produce records stamped months or years back (time
# partitioners), and time retention measures record timestamps, so the
# broker's first retention pass (~30 s after start) deleted them before the
# daemon read them.
kafka_single_node_properties() {
  cat <<EOF
log.dirs=$1/data
log.retention.ms=-1
num.partitions=1
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
EOF
}

# kafka_format_storage <svc> <dir> [format args]: KRaft's storage format,
# once, before the broker's first start.
kafka_format_storage() {
  local svc=$1 d=$2 id
  shift 2
  [ -f "$d/data/meta.properties" ] && return
  id=$(java -cp "$KAFKA_LIB/*" kafka.tools.StorageTool random-uuid 2>>"$LOGS/$svc.log") || fail "$svc"
  java -Dlog4j2.configurationFile="$d/log4j2.properties" -cp "$KAFKA_LIB/*" kafka.tools.StorageTool \
    format -t "$id" -c "$d/server.properties" "$@" >>"$LOGS/$svc.log" 2>&1 || fail "$svc"
}

# write_core_site <dir>: the one core-site.xml HDFS and HMS both read. Each
# writes its own copy: they start in parallel, and a copy of HDFS's could
# be taken before HDFS wrote it.
write_core_site() {
  mkdir -p "$1"
  cat >"$1/core-site.xml" <<EOF
<configuration>
  <property><name>fs.defaultFS</name><value>hdfs://127.0.0.1:8020</value></property>
</configuration>
EOF
}

write_hadoop_conf() {
  local c=$STATE/hadoop-conf
  write_core_site "$c"
  {
    echo "<configuration>"
    prop() { echo "  <property><name>$1</name><value>$2</value></property>"; }
    prop dfs.replication 1
    # One DataNode on a shared disk: a block being written reserves its full
    # size, so 2,000 open files (bench: 1,000 partitions x 2 hours) at the
    # default 128 MB would need 256 GB free and addBlock is refused. 16 MB
    # keeps that at 32 GB; files are small here anyway.
    prop dfs.blocksize 16777216
    prop dfs.namenode.name.dir "$STATE/hdfs/name"
    prop dfs.datanode.data.dir "$STATE/hdfs/data"
    prop dfs.permissions.enabled false
    prop dfs.namenode.rpc-address 127.0.0.1:8020
    prop dfs.namenode.datanode.registration.ip-hostname-check false
    prop dfs.datanode.hostname 127.0.0.1
    prop dfs.datanode.address 127.0.0.1:9866
    prop dfs.datanode.ipc.address 127.0.0.1:9867
    prop dfs.datanode.http.address 127.0.0.1:9864
    prop dfs.namenode.http-address 127.0.0.1:9870
    prop dfs.namenode.secondary.http-address 127.0.0.1:9868
    prop dfs.namenode.safemode.extension 0
    prop dfs.namenode.safemode.min.datanodes 1
    prop dfs.client.block.write.replace-datanode-on-failure.enable false
    echo "</configuration>"
  } >"$c/hdfs-site.xml"
  write_hadoop_extras "$c"
}

# write_hadoop_extras <conf dir>: what a NameNode or DataNode needs beside
# its XML: a log4j.properties logging to stderr, and webapps/ folders (the
# Maven jars ship none, the tarball has them under share/; the HTTP servers
# only need the folders to exist on the classpath).
write_hadoop_extras() {
  cat >"$1/log4j.properties" <<'EOF'
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %p %c{2}: %m%n
EOF
  local w
  for w in hdfs datanode secondary journal static; do mkdir -p "$1/webapps/$w"; done
}

start_hdfs() {
  write_hadoop_conf
  local cp="$STATE/hadoop-conf:$HDFS_LIB/*" jvm=("${OPENS[@]}" "${FAST[@]}" -Dhadoop.log.dir="$LOGS")
  export HADOOP_USER_NAME=root
  if ! alive namenode; then
    require_ports_free namenode 8020 9870
    fresh_log namenode
    if [ ! -f "$STATE/hdfs/name/current/VERSION" ]; then
      java "${jvm[@]}" -cp "$cp" org.apache.hadoop.hdfs.server.namenode.NameNode -format -force -nonInteractive \
        >>"$LOGS/namenode.log" 2>&1 || fail namenode
    fi
    launch namenode java -Dhdfs_sink_testenv=namenode -Xmx512m "${jvm[@]}" -cp "$cp" \
      org.apache.hadoop.hdfs.server.namenode.NameNode
  fi
  if ! alive datanode; then
    require_ports_free datanode 9866 9867 9864
    fresh_log datanode
    # Once the DataNode has a volume of its own it keeps it, whoever
    # restarts it (a DataNode on an empty directory has lost every block).
    if [ -n "${DATANODE_VOLUME_MB:-}" ] || [ -f "$RUN/datanode-volume.dev" ]; then mount_datanode_volume; fi
    launch datanode java -Dhdfs_sink_testenv=datanode -Xmx256m "${jvm[@]}" -cp "$cp" \
      org.apache.hadoop.hdfs.server.datanode.DataNode
  fi
  # Ready = out of safe mode with a live DataNode: the check writes, reads
  # back and deletes a small file, which needs both.
  local deadline=$((SECONDS + TIMEOUT))
  while ((SECONDS < deadline)); do
    alive namenode || fail namenode
    alive datanode || fail datanode
    if "$CHECK" -timeout 10s hdfs >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  "$CHECK" -timeout 10s hdfs >&2 || true
  log "HDFS not ready in ${TIMEOUT}s"
  fail datanode
}

start_registry() {
  if alive registry; then wait_ready registry registry; return; fi
  require_ports_free registry 8081 9000
  fresh_log registry
  # Storage is an H2 file under the state directory: a registry killed and
  # started again keeps its schemas and ids, as a Confluent SR does with its
  # _schemas topic (the outage tests rely on it). `down` wipes it.
  # WRITE_DELAY=0: H2 otherwise writes a commit up to 500 ms later, and a
  # schema registered just before a SIGKILL was gone after the restart.
  mkdir -p "$STATE/registry"
  launch registry "$REGISTRY_JAVA" -Dhdfs_sink_testenv=registry -Xmx384m "${FAST[@]}" \
    -Dapicurio.datasource.url="jdbc:h2:file:$STATE/registry/db;WRITE_DELAY=0" \
    -Dapicurio.datasource.jdbc.initial-size=2 -Dapicurio.datasource.jdbc.min-size=2 \
    -Dquarkus.http.host=127.0.0.1 -Dquarkus.http.port=8081 \
    -Dquarkus.management.host=127.0.0.1 -Dquarkus.management.port=9000 \
    -Dapicurio.rest.deletion.group.enabled=true -Dapicurio.rest.deletion.artifact.enabled=true \
    -Dapicurio.rest.deletion.artifact-version.enabled=true \
    -jar "$APICURIO_JAR"
  wait_ready registry registry
  # Apicurio has no default rule; Confluent's default is BACKWARD.
  curl -sf -X PUT -H 'Content-Type: application/vnd.schemaregistry.v1+json' \
    -d '{"compatibility":"BACKWARD"}' "$REGISTRY_URL/config" >/dev/null ||
    { log "could not set the registry's default compatibility"; fail registry; }
}

# write_hms_conf <svc> <port> <warehouse dir>: one metastore's configuration.
write_hms_conf() {
  local svc=$1 port=$2 wh=$3 c=$STATE/$1-conf
  mkdir -p "$c"
  write_core_site "$c"
  # The HA profile's nameservice, so that tables located there (the HA
  # tests') resolve; without the profile nothing refers to it.
  { echo "<configuration>"; ha_client_props; echo "</configuration>"; } >"$c/hdfs-site.xml"
  {
    echo "<configuration>"
    prop() { echo "  <property><name>$1</name><value>$2</value></property>"; }
    prop metastore.thrift.uris "thrift://127.0.0.1:$port"
    prop metastore.thrift.port "$port"
    prop metastore.thrift.bind.host 127.0.0.1 # honoured from Hive 4 on
    prop metastore.warehouse.dir "hdfs://127.0.0.1:8020/$wh"
    prop metastore.warehouse.external.dir "hdfs://127.0.0.1:8020/$wh" # Hive 4's default for external tables
    prop javax.jdo.option.ConnectionURL "jdbc:derby:;databaseName=$STATE/$svc/metastore_db;create=true"
    prop javax.jdo.option.ConnectionDriverName org.apache.derby.jdbc.EmbeddedDriver
    # Standalone mode: the defaults name hive-exec classes that are not here.
    prop metastore.task.threads.always org.apache.hadoop.hive.metastore.events.EventCleanerTask
    prop metastore.expression.proxy org.apache.hadoop.hive.metastore.DefaultPartitionExpressionProxy
    echo "</configuration>"
  } >"$c/metastore-site.xml"
  write_log4j2 "$c/log4j2.properties"
}

# start_hms [after-hdfs]: Hive Metastore 3.1 on 9083. HMS 3.1 ignores any
# bind host and listens on 0.0.0.0:9083.
start_hms() {
  SCHEMA_TOOL=org.apache.hadoop.hive.metastore.tools.MetastoreSchemaTool HADOOP_LIB=$HMS_HADOOP_LIB \
    start_metastore hms "$METASTORE_HOME" 9083 warehouse "${1:-}"
}

# start_hms4 [after-hdfs]: Hive Metastore 4.0 on 9084, with a warehouse of
# its own (both create a "default" database at their warehouse root).
start_hms4() {
  SCHEMA_TOOL=org.apache.hadoop.hive.metastore.tools.schematool.MetastoreSchemaTool HADOOP_LIB=$HMS4_HADOOP_LIB \
    start_metastore hms4 "$METASTORE4_HOME" 9084 warehouse4 "${1:-}"
}

# metastore_ready <svc> <port>: the readiness probe against that port.
metastore_ready() { HDFS_SINK_TESTENV_METASTORE="thrift://127.0.0.1:$2" wait_ready "$1" hms; }

# start_metastore <svc> <home> <port> <warehouse> [after-hdfs], with the
# schema tool's class (it moved in Hive 4) in SCHEMA_TOOL and the Hadoop
# jars' folder in HADOOP_LIB.
start_metastore() {
  local svc=$1 home=$2 port=$3 wh=$4
  if alive "$svc"; then metastore_ready "$svc" "$port"; return; fi
  require_ports_free "$svc" "$port"
  fresh_log "$svc"
  write_hms_conf "$svc" "$port" "$wh"
  local cp="$STATE/$svc-conf:$home/lib/*:$HADOOP_LIB/*"
  local jvm=("${OPENS[@]}" "${FAST[@]}" -Dlog4j2.configurationFile="$STATE/$svc-conf/log4j2.properties"
    -Dderby.stream.error.file="$LOGS/derby${svc#hms}.log")
  export METASTORE_HOME=$home HADOOP_USER_NAME=root
  mkdir -p "$STATE/$svc"
  if [ ! -d "$STATE/$svc/metastore_db" ]; then
    # Embedded Derby admits one JVM: the schema tool runs before the server.
    log "initialising the $svc schema"
    java "${jvm[@]}" -cp "$cp" "$SCHEMA_TOOL" \
      -initSchema -dbType derby >>"$LOGS/$svc.log" 2>&1 || { rm -rf "$STATE/$svc/metastore_db"; fail "$svc"; }
  fi
  # The server creates the default database's directory on HDFS.
  [ "${5:-}" = "after-hdfs" ] && wait_for_file "$RUN/hdfs.ready" "$svc"
  launch "$svc" java -Dhdfs_sink_testenv="$svc" -Xmx512m "${jvm[@]}" -cp "$cp" \
    org.apache.hadoop.hive.metastore.HiveMetaStore -p "$port"
  metastore_ready "$svc" "$port"
}

wait_for_file() {
  local deadline=$((SECONDS + TIMEOUT))
  while [ ! -f "$1" ]; do
    ((SECONDS < deadline)) || { log "$2: timed out waiting for $1"; exit 1; }
    [ -f "$RUN/hdfs.failed" ] && { log "$2: not started because HDFS failed"; exit 1; }
    [ -f "$RUN/secure.failed" ] && { log "$2: not started because the certificates or the OAuth server failed"; exit 1; }
    sleep 0.5
  done
}

check_spark() {
  [ -x "$SPARK_VENV/bin/python" ] && [ -f "$SPARK_VENV/.done" ] && [ -s "$SPARK_AVRO_JAR" ]
}

# smoke_spark: one real SparkSession against the metastore (~15 s, so opt-in
# with SPARK_CHECK=1).
smoke_spark() {
  local out=$STATE/spark-check.json
  log "checking Spark SQL against the metastore"
  if ! echo '{"queries": ["SHOW DATABASES"]}' |
    HDFS_SINK_TESTENV_SPARK_AVRO_JAR=$SPARK_AVRO_JAR SPARK_LOCAL_IP=127.0.0.1 \
      "$SPARK_VENV/bin/python" "$HERE/spark_sql.py" --out "$out" >>"$LOGS/spark.log" 2>&1; then
    fail spark
  fi
  grep -q '"default"' "$out" || { log "Spark SQL: SHOW DATABASES lacks default: $(cat "$out")"; fail spark; }
}

write_env() { # what internal/itest reads when no env override is set
  cat >"$STATE/testenv.env" <<EOF
HDFS_SINK_TESTENV_REGISTRY_URL=$REGISTRY_URL
HDFS_SINK_TESTENV_METASTORE4=thrift://127.0.0.1:9084
HDFS_SINK_TESTENV_PYTHON=$SPARK_VENV/bin/python
HDFS_SINK_TESTENV_SPARK_AVRO_JAR=$SPARK_AVRO_JAR
HDFS_SINK_TESTENV_SPARK_JAVA_HOME=${SPARK_JAVA_HOME:-}
EOF
  write_secure_env >>"$STATE/testenv.env"
  if [ "$KERBEROS" = 1 ]; then krb_write_env >>"$STATE/testenv.env"; fi
  if [ "$HA" = 1 ]; then ha_write_env >>"$STATE/testenv.env"; fi
}

REGISTRY_URL=http://127.0.0.1:8081/apis/ccompat/v7

# ---------------------------------------------------------------- faults
# Used by the fault harness (tools/chaos/) and the outage tests.

# signal_service <svc> <KILL|STOP|CONT>: signal a service's process group
# (SIGSTOP freezes it as a hung JVM would; CONT thaws it).
signal_service() {
  local svc=$1 sig=$2 pid
  case $sig in KILL | STOP | CONT) ;; *) die "signal: KILL, STOP or CONT, not $sig" ;; esac
  alive "$svc" || die "signal: $svc is not running"
  pid=$(cat "$(pidfile "$svc")")
  log "SIG$sig $svc (pid $pid)"
  kill -"$sig" -- "-$pid" 2>/dev/null || kill -"$sig" "$pid"
}

# dfsadmin <args>: hdfs dfsadmin against the test NameNode, as its superuser.
cmd_dfsadmin() {
  HDFS_LIB=$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")
  HADOOP_USER_NAME=root java "${FAST[@]}" -Xmx128m -Dhadoop.root.logger=WARN,console \
    -cp "$STATE/hadoop-conf:$HDFS_LIB/*" org.apache.hadoop.hdfs.tools.DFSAdmin "$@"
}

# The DataNode's volume of its own (DATANODE_VOLUME_MB at `up`): an ext4
# image on a loop device, mounted at the data directory, so a test can fill
# the DataNode's disk without filling the machine's. `ip netns exec` gives
# each command a private copy of the mount table, so the volume is mounted
# in the namespace of whichever command starts the DataNode, and filled
# from inside the DataNode's own (nsenter). Every mount is of the same loop
# device, hence of one file system.
DN_IMAGE() { echo "$STATE/hdfs/datanode-volume.img"; }
DN_DIR() { echo "$STATE/hdfs/data"; }

mount_datanode_volume() {
  local img dev dir t
  img=$(DN_IMAGE) dir=$(DN_DIR)
  for t in losetup mkfs.ext4 nsenter mountpoint fallocate; do
    command -v "$t" >/dev/null || apt_install util-linux e2fsprogs mount
  done
  mkdir -p "$dir"
  dev=$(cat "$RUN/datanode-volume.dev" 2>/dev/null || true)
  if [ -z "$dev" ] || ! losetup "$dev" 2>/dev/null | grep -q "$img"; then
    if [ ! -f "$img" ]; then
      log "creating a ${DATANODE_VOLUME_MB} MB volume for the DataNode"
      truncate -s "${DATANODE_VOLUME_MB}M" "$img"
      mkfs.ext4 -q -m 0 "$img" >&2
    fi
    dev=$(losetup -f --show "$img") || die "no loop device for the DataNode's volume"
    echo "$dev" >"$RUN/datanode-volume.dev"
  fi
  mountpoint -q "$dir" || mount "$dev" "$dir"
}

unmount_datanode_volume() {
  local dev dir
  dir=$(DN_DIR)
  dev=$(cat "$RUN/datanode-volume.dev" 2>/dev/null || true)
  [ -n "$dev" ] || return 0
  mountpoint -q "$dir" 2>/dev/null && umount "$dir"
  # Other namespaces may still hold a mount until their last process
  # exits: the device is detached once it is unused.
  losetup -d "$dev" 2>/dev/null || true
  rm -f "$RUN/datanode-volume.dev"
}

# in_datanode <cmd...>: run in the DataNode's mount namespace, where its
# volume is mounted.
in_datanode() {
  alive datanode || die "the DataNode is not running"
  nsenter -t "$(cat "$(pidfile datanode)")" -m -- "$@"
}

# fill-datanode: a filler file takes the volume's free space but 8 MB (less
# than a block), so the NameNode stops placing blocks there; free-datanode
# removes it. The DataNode notices at its next heartbeat (3 s).
cmd_fill_datanode() {
  local dir free
  dir=$(DN_DIR)
  in_datanode mountpoint -q "$dir" || die "fill-datanode: the DataNode has no volume of its own (start with DATANODE_VOLUME_MB=<size>)"
  free=$(in_datanode df -B1 --output=avail "$dir" | tail -1)
  ((free > 8 << 20)) || { log "the DataNode's volume is already full"; return 0; }
  in_datanode fallocate -l $((free - (8 << 20))) "$dir/filler"
  log "DataNode volume filled: $(in_datanode df -h --output=avail "$dir" | tail -1 | tr -d ' ') left"
}

cmd_free_datanode() {
  in_datanode rm -f "$(DN_DIR)/filler"
  log "DataNode volume freed: $(in_datanode df -h --output=avail "$(DN_DIR)" | tail -1 | tr -d ' ') available"
}

# truncate-kafka-log <topic> <partition>: the log an unclean leader
# election leaves, on a one-broker cluster that cannot have one: the broker
# stops, the partition's segments (and producer snapshots) are deleted,
# keeping its topic id (partition.metadata) and leader epoch history, and
# the broker starts again: the same topic, its log empty from offset 0, its
# leader epoch bumped by the restart (integration test TestTruncatedLogIsRefused).
cmd_truncate_kafka_log() {
  local dir=$STATE/kafka/data/${1:?topic}-${2:?partition}
  [ -d "$dir" ] || die "truncate-kafka-log: no partition directory $dir"
  stop kafka
  rm -f "$dir"/*.log "$dir"/*.index "$dir"/*.timeindex "$dir"/*.snapshot "$dir"/*.txnindex
  log "kafka: $1-$2 truncated to nothing (segments deleted)"
  cmd_start kafka
}

# ---------------------------------------------------------------- commands

cmd_up() {
  local t0=$SECONDS
  ensure_prereqs
  fetch_all
  mkdir -p "$STATE" "$LOGS" "$RUN"
  build_checker
  write_env
  rm -f "$RUN"/*.ready "$RUN"/*.failed
  # HMS copies core-site.xml from here while HDFS starts: write it first.
  write_hadoop_conf
  # Independent services in parallel; HMS waits for HDFS before its server
  # starts; Kafka and the registry's TLS proxy need the certificates, and
  # Kafka the OAuth server (its validator reads the JWKS), which are made
  # meanwhile.
  local pids=() names=(hdfs registry hms secure kafka) i rc=0
  # (Not `start_hdfs && touch`: errexit is off inside an && list.)
  (
    trap '[ -f "$RUN/hdfs.ready" ] || touch "$RUN/hdfs.failed"' EXIT
    start_hdfs
    touch "$RUN/hdfs.ready"
  ) & pids+=($!)
  (start_registry; wait_for_file "$PKI/.done" registry-tls; start_registry_tls) & pids+=($!)
  (start_hms after-hdfs) & pids+=($!)
  (
    trap '[ -f "$RUN/oauth.ready" ] || touch "$RUN/secure.failed"' EXIT
    make_pki
    start_oauth
  ) & pids+=($!)
  (wait_for_file "$RUN/oauth.ready" kafka; start_kafka) & pids+=($!)
  if [ "${HMS4:-1}" = 1 ]; then (start_hms4 after-hdfs) & pids+=($!); names+=(hms4); fi
  if [ "$KERBEROS" = 1 ]; then (start_kerberos) & pids+=($!); names+=(kerberos); fi
  if [ "$HA" = 1 ]; then (start_ha) & pids+=($!); names+=(ha); fi
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}" || { log "${names[$i]} failed"; rc=1; }
  done
  check_spark || { log "spark: the pyspark venv or spark-avro jar is missing"; rc=1; }
  if [ "$rc" = 0 ] && [ "${SPARK_CHECK:-0}" = 1 ]; then smoke_spark || rc=1; fi
  if [ "$rc" != 0 ]; then
    log "up failed; running services are left up (testenv.sh down stops them)"
    exit 1
  fi
  log "all services ready in $((SECONDS - t0))s"
  cmd_status
}

# start <service>: one plain service that `stop` stopped, started again
# with its state, and nothing else touched. Outage tests end with it rather
# than `up`: `up` rebuilds the readiness checker, rewrites testenv.env and
# starts every service that is down, while tests of other packages run
# beside them (the Kerberos tests stop their KDC on purpose).
cmd_start() {
  local svc=${1:-}
  case $svc in
    kafka | namenode | datanode | hms | hms4 | registry) ;;
    *) die "start: name one of kafka namenode datanode hms hms4 registry" ;;
  esac
  ensure_prereqs
  fetch_all
  mkdir -p "$LOGS" "$RUN"
  CHECK=$STATE/bin/itest-ready
  [ -x "$CHECK" ] || build_checker
  case $svc in
    kafka) start_kafka ;;
    namenode | datanode) start_hdfs ;;
    hms) start_hms ;;
    hms4) start_hms4 ;;
    registry) start_registry ;;
  esac
  log "$svc started"
}

cmd_down() {
  local svc pids=()
  # In parallel: each stop waits for its own process group only.
  for svc in "${PROCESSES[@]}"; do stop "$svc" & pids+=($!); done
  wait "${pids[@]}"
  [ "${KEEP:-0}" = 1 ] || unmount_datanode_volume
  if [ "${KEEP:-0}" = 1 ]; then
    log "KEEP=1: state kept in $STATE"
  elif [ -d "$STATE" ]; then
    log "wiping $STATE (logs kept in $LOGS)"
    find "$STATE" -mindepth 1 -maxdepth 1 ! -name logs -exec rm -rf {} +
  fi
}

cmd_status() {
  cached_paths
  local svc down=() check=$STATE/bin/itest-ready
  for svc in "${SERVICES[@]}"; do
    [ "$svc" = hms4 ] && [ "${HMS4:-1}" != 1 ] && continue
    local ok=1 why=""
    case $svc in
      spark) check_spark || { ok=0; why="venv $SPARK_VENV or $SPARK_AVRO_JAR missing"; } ;;
      *)
        if ! alive "$svc"; then
          ok=0; why="not running"
        elif [ -x "$check" ]; then
          local what=$svc port=9083
          [ "$svc" = namenode ] || [ "$svc" = datanode ] && what=hdfs
          [ "$svc" = krb-namenode ] || [ "$svc" = krb-datanode ] && what=krb-hdfs
          [ "$svc" = hms4 ] && what=hms port=9084
          case $svc in ha-*) what=ha-hdfs ;; esac
          case $svc in
            kdc | kdc-skew) ;;
            *) why=$(HDFS_SINK_TESTENV_METASTORE="thrift://127.0.0.1:$port" "$check" -timeout 10s "$what" 2>&1) || ok=0 ;;
          esac
        fi
        ;;
    esac
    if [ "$ok" = 1 ]; then
      printf '%-9s up%s\n' "$svc" "$( [ -f "$(pidfile "$svc")" ] && echo " (pid $(cat "$(pidfile "$svc")"))")"
    else
      printf '%-9s DOWN: %s\n' "$svc" "$why"
      down+=("$svc")
    fi
  done
  if [ ${#down[@]} -gt 0 ]; then
    echo "down: ${down[*]}" >&2
    return 1
  fi
}

cmd_logs() {
  local svc=${1:-}
  [ -n "$svc" ] || die "usage: testenv.sh logs <$(ls "$LOGS" 2>/dev/null | sed 's/\.log$//' | paste -sd'|')>"
  [ -f "$LOGS/$svc.log" ] || die "no log $LOGS/$svc.log"
  if [ "${FOLLOW:-0}" = 1 ]; then exec tail -n "${LINES:-100}" -F "$LOGS/$svc.log"; fi
  tail -n "${LINES:-100}" "$LOGS/$svc.log"
}

case ${1:-} in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  logs) shift; cmd_logs "$@" ;;
  stop) # stop one service, keeping all state (outage tests; `up` restarts it)
    case ${2:-} in
      kafka | namenode | datanode | hms | hms4 | registry | oauth | registry-tls | kdc | kdc-skew | krb-namenode | krb-datanode | krb-hms | krb-kafka | ha-jn | ha-nn1 | ha-nn2 | ha-dn1 | ha-dn2 | ha-dn3) stop "$2" ;;
      *) die "stop: name one of kafka namenode datanode hms hms4 registry oauth registry-tls kdc kdc-skew krb-namenode krb-datanode krb-hms krb-kafka ha-jn ha-nn1 ha-nn2 ha-dn1 ha-dn2 ha-dn3" ;;
    esac ;;
  start) shift; cmd_start "$@" ;; # after `stop <service>` (outage tests)
  start-kdc) start_kdcs ;; # after `stop kdc` (KDC outage tests)
  krb-datanode) shift; cmd_krb_datanode "$@" ;;
  krb-encrypt) shift; cmd_krb_encrypt "$@" ;;
  signal) # signal <service> KILL|STOP|CONT (fault injection)
    case ${2:-} in kafka | namenode | datanode | hms | hms4 | registry | ha-jn | ha-nn1 | ha-nn2 | ha-dn1 | ha-dn2 | ha-dn3) signal_service "$2" "${3:-}" ;; *) die "signal: name one of kafka namenode datanode hms hms4 registry ha-jn ha-nn1 ha-nn2 ha-dn1 ha-dn2 ha-dn3" ;; esac ;;
  dfsadmin) shift; cmd_dfsadmin "$@" ;;
  fill-datanode) cmd_fill_datanode ;;
  free-datanode) cmd_free_datanode ;;
  truncate-kafka-log) shift; cmd_truncate_kafka_log "$@" ;;
  ha-up) cmd_ha_up ;; # (re)start the HA profile alone (after a kill)
  ha-state) cmd_ha_state ;;
  haadmin) shift; cmd_haadmin "$@" ;;
  ha-failover) cmd_ha_failover ;;
  ha-kill-active) cmd_ha_kill_active ;;
  ha-datanode) shift; cmd_ha_datanode "$@" ;;
  fetch) ensure_prereqs; fetch_all ;;
  unit-tools) unit_tools ;; # promtool, for `make unit`
  *) echo "usage: $0 up|down|status|logs <service>|stop <service>|start <service>|start-kdc|krb-datanode <authentication|integrity|privacy|privacy-digest>|krb-encrypt <on|off>|signal <service> KILL|STOP|CONT|dfsadmin <args>|fill-datanode|free-datanode|truncate-kafka-log <topic> <partition>|ha-up|ha-state|haadmin <args>|ha-failover|ha-kill-active|ha-datanode <kill|stop|cont|decommission|recommission|await-dead> <1|2|3>|fetch|unit-tools" >&2; exit 2 ;;
esac
