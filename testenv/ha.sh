# ha.sh: the HA profile of testenv.sh (sourced by it, not run): a second
# HDFS, as production runs it. One nameservice (hdfsha) of two NameNodes
# sharing their edit log through a JournalNode, failed over by hand with
# `hdfs haadmin` (no ZooKeeper, no ZKFC), and three DataNodes with
# dfs.replication=3, so every block is written through a pipeline of three.
# The plain single-NameNode HDFS (8020) is left alone; the failover and
# pipeline faults (tools/chaos/, integration/exactlyonce) run here.
#
# Why one JournalNode: a quorum of one is a quorum; hdfs-sink never talks
# to JournalNodes, and the faults here are NameNode and DataNode faults.
# Two more JVMs would cost ~250 MB and start-up CPU on a 2-core machine.
# Why no ZKFC: what hdfs-sink sees is the same (the active goes away, the
# standby becomes active and answers); only who flips it differs. Manual
# failover lets the harness choose the moment, and saves three JVMs
# (ZooKeeper and two ZKFCs).
# shellcheck shell=bash

HA_NS=hdfsha
HA_NN_IDS=(nn1 nn2)
HA_NN_RPC=(8120 8121) HA_NN_HTTP=(9880 9881)
HA_JN_RPC=8485 HA_JN_HTTP=8480
HA_DN_DATA=(9876 9886 9896) HA_DN_IPC=(9877 9887 9897) HA_DN_HTTP=(9875 9885 9895)
HA_SERVICES=(ha-jn ha-nn1 ha-nn2 ha-dn1 ha-dn2 ha-dn3)
HA_PROCESSES=(ha-dn1 ha-dn2 ha-dn3 ha-nn1 ha-nn2 ha-jn) # stop order
# Heaps (measured, testenv/README.md): the NameNodes hold a few thousand
# files, the DataNodes a few hundred blocks.
HA_NN_HEAP=${HA_NN_HEAP:-256m} HA_JN_HEAP=${HA_JN_HEAP:-128m} HA_DN_HEAP=${HA_DN_HEAP:-128m}

ha_dir() { echo "$STATE/ha"; }
ha_client_conf() { echo "$STATE/ha-client-conf"; }
ha_exclude() { echo "$STATE/ha/dfs.exclude"; }

ha_prop() { echo "  <property><name>$1</name><value>$2</value></property>"; }

# ha_client_props: what any client needs to resolve hdfs://hdfsha (the
# daemon's hadoop.conf.dir, the metastore's, Spark's, haadmin's).
ha_client_props() {
  local i
  ha_prop dfs.nameservices "$HA_NS"
  ha_prop "dfs.ha.namenodes.$HA_NS" "$(IFS=,; echo "${HA_NN_IDS[*]}")"
  for i in 0 1; do
    ha_prop "dfs.namenode.rpc-address.$HA_NS.${HA_NN_IDS[$i]}" "127.0.0.1:${HA_NN_RPC[$i]}"
    ha_prop "dfs.namenode.http-address.$HA_NS.${HA_NN_IDS[$i]}" "127.0.0.1:${HA_NN_HTTP[$i]}"
  done
  ha_prop "dfs.client.failover.proxy.provider.$HA_NS" org.apache.hadoop.hdfs.server.namenode.ha.ConfiguredFailoverProxyProvider
  # haadmin -failover fences the old active when it does not step down by
  # itself (it was killed): nothing to fence on one machine, so a no-op.
  ha_prop dfs.ha.fencing.methods 'shell(/bin/true)'
  ha_prop dfs.ha.automatic-failover.enabled false
}

# write_ha_client_conf <dir>: core-site.xml and hdfs-site.xml of a client.
write_ha_client_conf() {
  mkdir -p "$1"
  {
    echo "<configuration>"
    ha_prop fs.defaultFS "hdfs://$HA_NS"
    echo "</configuration>"
  } >"$1/core-site.xml"
  { echo "<configuration>"; ha_client_props; echo "</configuration>"; } >"$1/hdfs-site.xml"
  # haadmin and dfsadmin run with this directory first on their classpath.
  printf 'log4j.rootLogger=WARN,console\nlog4j.appender.console=org.apache.log4j.ConsoleAppender\nlog4j.appender.console.target=System.err\nlog4j.appender.console.layout=org.apache.log4j.PatternLayout\nlog4j.appender.console.layout.ConversionPattern=%%d{ISO8601} %%p %%c{2}: %%m%%n\n' >"$1/log4j.properties"
}

# write_ha_server_conf <dir> <nn id | dn index>: a NameNode's, JournalNode's
# or DataNode's own directory. Each NameNode names its id (both are on
# 127.0.0.1, so it cannot find itself by address); each DataNode its ports
# and data directory.
write_ha_server_conf() {
  local c=$1 who=$2 d
  d=$(ha_dir)
  write_ha_client_conf "$c"
  {
    echo "<configuration>"
    ha_client_props
    ha_prop dfs.replication 3
    ha_prop dfs.blocksize 16777216 # as the plain HDFS (testenv.sh's write_hadoop_conf says why)
    ha_prop dfs.permissions.enabled false
    ha_prop dfs.namenode.shared.edits.dir "qjournal://127.0.0.1:$HA_JN_RPC/$HA_NS"
    ha_prop dfs.journalnode.edits.dir "$d/jn"
    ha_prop dfs.journalnode.rpc-address "127.0.0.1:$HA_JN_RPC"
    ha_prop dfs.journalnode.http-address "127.0.0.1:$HA_JN_HTTP"
    ha_prop dfs.namenode.datanode.registration.ip-hostname-check false
    ha_prop dfs.namenode.safemode.extension 0
    ha_prop dfs.namenode.safemode.min.datanodes 1
    ha_prop dfs.hosts.exclude "$(ha_exclude)"
    # The standby reads the shared edits only once the active has rolled
    # them (every 120 s by default) and it has tailed them (60 s). A
    # NameNode started again after a kill stayed in safe mode, unable to
    # take over, until then: 2 minutes per fault. Rolled and tailed every
    # few seconds here; a failover catches up on every edit either way.
    ha_prop dfs.ha.log-roll.period 10s
    ha_prop dfs.ha.tail-edits.period 2s
    ha_prop dfs.datanode.hostname 127.0.0.1
    # A DataNode is declared dead after 2 x the recheck interval + 10
    # heartbeats: 90 s here, not the default 10.5 minutes, so that the
    # fault of a DataNode lost for good (tools/chaos: ha-datanode-lost)
    # fits in the harness's 5-minute bound on one action. The faults that
    # start a DataNode again do so well within 90 s.
    ha_prop dfs.namenode.heartbeat.recheck-interval 30000
    case $who in
      nn*)
        ha_prop dfs.ha.namenode.id "$who"
        ha_prop dfs.namenode.name.dir "$d/$who"
        ;;
      [0-9])
        ha_prop dfs.datanode.data.dir "$d/dn$who"
        ha_prop dfs.datanode.address "127.0.0.1:${HA_DN_DATA[$((who - 1))]}"
        ha_prop dfs.datanode.ipc.address "127.0.0.1:${HA_DN_IPC[$((who - 1))]}"
        ha_prop dfs.datanode.http.address "127.0.0.1:${HA_DN_HTTP[$((who - 1))]}"
        ;;
    esac
    echo "</configuration>"
  } >"$c/hdfs-site.xml"
  write_hadoop_extras "$c"
}

ha_jvm() { echo "${OPENS[*]} ${FAST[*]} -Dhadoop.log.dir=$LOGS"; }

# ha_launch <svc> <heap> <conf dir> <class> [args]: one Hadoop daemon.
ha_launch() {
  local svc=$1 heap=$2 c=$3 class=$4 jvm
  shift 4
  read -r -a jvm <<<"$(ha_jvm)"
  HADOOP_USER_NAME=root launch "$svc" java -Dhdfs_sink_testenv="$svc" -Xmx"$heap" "${jvm[@]}" \
    -cp "$c:$HDFS_LIB/*" "$class" "$@"
}

start_ha_jn() {
  alive ha-jn && return 0
  require_ports_free ha-jn "$HA_JN_RPC" "$HA_JN_HTTP"
  fresh_log ha-jn
  mkdir -p "$(ha_dir)/jn"
  write_ha_server_conf "$STATE/ha-jn-conf" jn
  ha_launch ha-jn "$HA_JN_HEAP" "$STATE/ha-jn-conf" org.apache.hadoop.hdfs.qjournal.server.JournalNode
  local deadline=$((SECONDS + TIMEOUT))
  while port_free "$HA_JN_RPC"; do
    alive ha-jn || fail ha-jn
    ((SECONDS < deadline)) || fail ha-jn
    sleep 0.2
  done
}

# ha_format: nn1 formats the namespace and the shared journal; nn2 starts
# from a copy of nn1's fresh name directory (what -bootstrapStandby would
# download, without a JVM and nn1's HTTP server in between).
ha_format() {
  local d jvm
  d=$(ha_dir)
  [ -f "$d/nn1/current/VERSION" ] && [ -f "$d/nn2/current/VERSION" ] && return 0
  rm -rf "$d/nn1" "$d/nn2"
  write_ha_server_conf "$STATE/ha-nn1-conf" nn1
  read -r -a jvm <<<"$(ha_jvm)"
  log "formatting the $HA_NS nameservice"
  HADOOP_USER_NAME=root java "${jvm[@]}" -cp "$STATE/ha-nn1-conf:$HDFS_LIB/*" org.apache.hadoop.hdfs.server.namenode.NameNode \
    -format -force -nonInteractive >>"$LOGS/ha-format.log" 2>&1 || { tail -20 "$LOGS/ha-format.log" >&2; fail ha-jn; }
  cp -a "$d/nn1" "$d/nn2"
}

start_ha_nn() { # <id>
  local id=$1 i=0
  [ "$id" = nn2 ] && i=1
  alive "ha-$id" && return 0
  require_ports_free "ha-$id" "${HA_NN_RPC[$i]}" "${HA_NN_HTTP[$i]}"
  fresh_log "ha-$id"
  write_ha_server_conf "$STATE/ha-$id-conf" "$id"
  ha_launch "ha-$id" "$HA_NN_HEAP" "$STATE/ha-$id-conf" org.apache.hadoop.hdfs.server.namenode.NameNode
}

start_ha_dn() { # <1|2|3>
  local n=$1 i=$(($1 - 1))
  alive "ha-dn$n" && return 0
  require_ports_free "ha-dn$n" "${HA_DN_DATA[$i]}" "${HA_DN_IPC[$i]}" "${HA_DN_HTTP[$i]}"
  fresh_log "ha-dn$n"
  write_ha_server_conf "$STATE/ha-dn$n-conf" "$n"
  ha_launch "ha-dn$n" "$HA_DN_HEAP" "$STATE/ha-dn$n-conf" org.apache.hadoop.hdfs.server.datanode.DataNode
}

# ha_state <id>: active, standby, or "down" (from the NameNode's JMX: a
# curl, not a haadmin JVM).
ha_state() {
  local i=0 s
  [ "$1" = nn2 ] && i=1
  s=$(curl -sf --max-time 3 "http://127.0.0.1:${HA_NN_HTTP[$i]}/jmx?qry=Hadoop:service=NameNode,name=NameNodeStatus" 2>/dev/null |
    sed -n 's/.*"State" *: *"\([a-z]*\)".*/\1/p') || true
  echo "${s:-down}"
}

# ha_active: the id of the active NameNode, or nothing.
ha_active() {
  local id
  for id in "${HA_NN_IDS[@]}"; do
    [ "$(ha_state "$id")" = active ] && { echo "$id"; return 0; }
  done
  return 0
}

ha_other() { if [ "$1" = nn1 ]; then echo nn2; else echo nn1; fi; }

cmd_haadmin() { # haadmin <args>: hdfs haadmin -ns hdfsha, as the superuser
  write_ha_client_conf "$(ha_client_conf)"
  HDFS_LIB=${HDFS_LIB:-$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")}
  HADOOP_USER_NAME=root java "${FAST[@]}" -Xmx128m -Dhadoop.root.logger=WARN,console \
    -cp "$(ha_client_conf):$HDFS_LIB/*" org.apache.hadoop.hdfs.tools.DFSHAAdmin -ns "$HA_NS" "$@"
}

# wait_ha_state <id> <state>: until the NameNode's JMX says so.
wait_ha_state() {
  local deadline=$((SECONDS + TIMEOUT))
  until [ "$(ha_state "$1")" = "$2" ]; do
    ((SECONDS < deadline)) || { log "$1 is not $2 after ${TIMEOUT}s (it is $(ha_state "$1"))"; return 1; }
    sleep 0.3
  done
}

# ha_ensure_active: NameNodes start as standby; with none active (a fresh
# cluster, or both restarted), make the first one that answers active.
ha_ensure_active() {
  local id deadline=$((SECONDS + TIMEOUT))
  [ -n "$(ha_active)" ] && return 0
  while ((SECONDS < deadline)); do
    for id in "${HA_NN_IDS[@]}"; do
      if [ "$(ha_state "$id")" = standby ]; then
        log "making $id the active NameNode of $HA_NS"
        # --forceactive: haadmin otherwise refuses while it cannot ask the
        # other NameNode (down, or still starting); none is active (JMX),
        # and a NameNode always starts as standby.
        cmd_haadmin -transitionToActive --forceactive "$id" >>"$LOGS/ha-admin.log" 2>&1 || return 1
        wait_ha_state "$id" active
        return
      fi
    done
    sleep 0.5
  done
  log "no NameNode of $HA_NS answered in ${TIMEOUT}s"
  return 1
}

# ha_dn_registered <n>: DataNode n serves and is registered with the active
# NameNode (its JMX: the actor of the active NameNode is RUNNING). Without
# this wait ha-up returned while a restarted DataNode was not listening yet:
# the NameNode, which never counted it dead, still placed blocks on it, and
# the next file failed with "connection refused".
ha_dn_registered() {
  curl -sf --max-time 3 "http://127.0.0.1:${HA_DN_HTTP[$(($1 - 1))]}/jmx?qry=Hadoop:service=DataNode,name=DataNodeInfo" 2>/dev/null |
    python3 -c 'import json,sys; a=json.loads(json.load(sys.stdin)["beans"][0]["BPServiceActorInfo"]); sys.exit(not any(x["NamenodeHaState"]=="active" and x["ActorState"]=="RUNNING" for x in a))' 2>/dev/null
}

# wait_ha_ready: one NameNode active, three DataNodes serving, registered
# with it, live and in service, and a file written, read back and deleted
# through the nameservice.
wait_ha_ready() {
  local deadline=$((SECONDS + TIMEOUT)) s n
  while ((SECONDS < deadline)); do
    for s in "${HA_SERVICES[@]}"; do alive "$s" || fail "$s"; done
    local serving=1
    for n in 1 2 3; do
      if port_free "${HA_DN_DATA[$((n - 1))]}" || ! ha_dn_registered "$n"; then serving=0; fi
    done
    if [ "$serving" = 1 ] && "$CHECK" -timeout 10s ha-hdfs >/dev/null 2>&1; then return 0; fi
    sleep 1
  done
  "$CHECK" -timeout 10s ha-hdfs >&2 || true
  log "$HA_NS not ready in ${TIMEOUT}s"
  fail ha-nn1
}

# start_ha: the whole profile. The JournalNode before the format, the
# NameNodes and DataNodes together, then one NameNode made active.
start_ha() {
  mkdir -p "$(ha_dir)"
  [ -f "$(ha_exclude)" ] || : >"$(ha_exclude)"
  write_ha_client_conf "$(ha_client_conf)"
  start_ha_jn
  ha_format
  local id n
  for id in "${HA_NN_IDS[@]}"; do start_ha_nn "$id"; done
  for n in 1 2 3; do start_ha_dn "$n"; done
  ha_ensure_active || fail ha-nn1
  # A NameNode started again (after a kill) must answer too: the next
  # fault may fail over to it.
  for id in "${HA_NN_IDS[@]}"; do
    [ "$(ha_state "$id")" != down ] || wait_ha_state "$id" standby || fail "ha-$id"
    wait_ha_out_of_safemode "$id" || fail "ha-$id"
  done
  wait_ha_ready
}

# ha_safemode <id>: the NameNode's safe mode status, "" when it is off (or
# it does not answer).
ha_safemode() {
  local i=0
  [ "$1" = nn2 ] && i=1
  curl -sf --max-time 3 "http://127.0.0.1:${HA_NN_HTTP[$i]}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo" 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["beans"][0]["Safemode"])' 2>/dev/null || true
}

# wait_ha_out_of_safemode <id>: a standby in safe mode cannot take over
# (haadmin refuses: "not ready to become active").
wait_ha_out_of_safemode() {
  local deadline=$((SECONDS + TIMEOUT))
  while [ -n "$(ha_safemode "$1")" ]; do
    ((SECONDS < deadline)) || { log "$1 still in safe mode after ${TIMEOUT}s: $(ha_safemode "$1")"; return 1; }
    sleep 0.5
  done
}

ha_write_env() {
  echo "HDFS_SINK_TESTENV_HA_CONF=$(ha_client_conf)"
}

# ---------------------------------------------------------------- faults

# ha-failover: fail over from the active NameNode to the other and return
# once the other is active. With the active gone (killed), haadmin fences
# it (a no-op here) and makes the standby active.
cmd_ha_failover() {
  local from to
  from=$(ha_active)
  if [ -z "$from" ]; then
    # No active NameNode: the one that answers takes over.
    for from in "${HA_NN_IDS[@]}"; do [ "$(ha_state "$from")" = down ] && break; done
  fi
  to=$(ha_other "$from")
  [ "$(ha_state "$to")" = standby ] || die "ha-failover: $to is $(ha_state "$to"), not standby"
  log "failover $from -> $to"
  cmd_haadmin -failover "$from" "$to" >>"$LOGS/ha-admin.log" 2>&1 || { tail -5 "$LOGS/ha-admin.log" >&2; die "haadmin -failover $from $to failed"; }
  wait_ha_state "$to" active || exit 1
  echo "$to"
}

# ha-kill-active: SIGKILL the active NameNode; prints its id.
cmd_ha_kill_active() {
  local id
  id=$(ha_active)
  [ -n "$id" ] || die "ha-kill-active: no NameNode is active"
  signal_service "ha-$id" KILL
  echo "$id"
}

# ha-datanode <kill|stop|cont|decommission|recommission> <1|2|3>
cmd_ha_datanode() {
  local verb=${1:-} n=${2:-}
  case $n in 1 | 2 | 3) ;; *) die "ha-datanode: name DataNode 1, 2 or 3" ;; esac
  case $verb in
    kill) signal_service "ha-dn$n" KILL ;;
    stop) signal_service "ha-dn$n" STOP ;;
    cont) signal_service "ha-dn$n" CONT ;;
    decommission | recommission) ha_decommission "$verb" "$n" ;;
    await-dead) ha_await_dead "$n" ;;
    *) die "ha-datanode: kill, stop, cont, decommission, recommission or await-dead" ;;
  esac
}

# ha_decommission <decommission|recommission> <n>: DataNode n into or out
# of the exclude file, then dfsadmin -refreshNodes (both NameNodes); returns
# once the active NameNode has it decommissioning, or back in service.
ha_decommission() {
  local n=$2 addr ex
  addr=127.0.0.1:${HA_DN_DATA[$((n - 1))]}
  ex=$(ha_exclude)
  grep -vxF "$addr" "$ex" >"$ex.new" || true
  [ "$1" = decommission ] && echo "$addr" >>"$ex.new"
  mv "$ex.new" "$ex"
  HDFS_LIB=${HDFS_LIB:-$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")}
  HADOOP_USER_NAME=root java "${FAST[@]}" -Xmx128m -Dhadoop.root.logger=WARN,console \
    -cp "$(ha_client_conf):$HDFS_LIB/*" org.apache.hadoop.hdfs.tools.DFSAdmin -refreshNodes >>"$LOGS/ha-admin.log" 2>&1 ||
    die "dfsadmin -refreshNodes failed (see $LOGS/ha-admin.log)"
  local deadline=$((SECONDS + TIMEOUT)) want=1 got
  [ "$1" = recommission ] && want=0
  while ((SECONDS < deadline)); do
    got=$(ha_decommissioning)
    if { [ "$want" = 1 ] && [ "${got:-0}" -ge 1 ]; } || { [ "$want" = 0 ] && [ "${got:-1}" = 0 ]; }; then
      log "DataNode $n ($addr): $1 under way (decommissioning or decommissioned: $got)"
      return 0
    fi
    sleep 0.5
  done
  die "DataNode $n: $1 not seen by the active NameNode in ${TIMEOUT}s"
}

# ha_await_dead <n>: until the active NameNode lists DataNode n among its
# dead ones: no heartbeat for 2 x dfs.namenode.heartbeat.recheck-interval
# + 10 x dfs.heartbeat.interval (90 s here, 10.5 minutes by default).
ha_await_dead() {
  local addr=127.0.0.1:${HA_DN_DATA[$(($1 - 1))]} id i deadline=$((SECONDS + 900)) t0=$SECONDS
  while ((SECONDS < deadline)); do
    id=$(ha_active)
    if [ -n "$id" ]; then
      i=0
      [ "$id" = nn2 ] && i=1
      if curl -sf --max-time 3 "http://127.0.0.1:${HA_NN_HTTP[$i]}/jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo" |
        python3 -c 'import json,sys; sys.exit(sys.argv[1] not in json.load(sys.stdin)["beans"][0]["DeadNodes"])' "$addr"; then
        log "DataNode $1 ($addr) declared dead by $id after $((SECONDS - t0))s of waiting"
        return 0
      fi
    fi
    sleep 2
  done
  die "DataNode $1 ($addr) not declared dead in 15 minutes"
}

# ha_decommissioning: DataNodes the active NameNode has decommissioning or
# decommissioned.
ha_decommissioning() {
  local id i=0
  id=$(ha_active)
  [ -n "$id" ] || return 0
  [ "$id" = nn2 ] && i=1
  curl -sf --max-time 3 "http://127.0.0.1:${HA_NN_HTTP[$i]}/jmx?qry=Hadoop:service=NameNode,name=FSNamesystemState" |
    python3 -c 'import json,sys; b=json.load(sys.stdin)["beans"][0]; print(b["NumDecommissioningDataNodes"]+b["NumDecomLiveDataNodes"]+b["NumDecomDeadDataNodes"])'
}

# ha_state_cmd: one line per NameNode, "<id> <state>".
cmd_ha_state() {
  local id
  for id in "${HA_NN_IDS[@]}"; do echo "$id $(ha_state "$id")"; done
}

# ha-up: start what of the profile is not running (a killed NameNode comes
# back as standby), make a NameNode active if none is, wait until ready.
cmd_ha_up() {
  HDFS_LIB=$(fetch_pom hdfs -Dhadoop.version="$HADOOP_VERSION")
  CHECK=$STATE/bin/itest-ready
  [ -x "$CHECK" ] || build_checker
  mkdir -p "$LOGS" "$RUN"
  start_ha
  cmd_ha_state
}
