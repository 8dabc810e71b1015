#!/usr/bin/env bash
# nncalls.sh COMMAND [ARGS...]: runs the command and prints the NameNode
# calls it caused, by kind, from the test NameNode's audit log (testenv's
# .testenv/logs/namenode.log, FSNamesystem.audit). The audit log holds every
# call that reached the namespace (a call the NameNode refused before that,
# such as a create whose parent is missing, is not in it) and no block
# calls (addBlock, complete). Anything else using the NameNode meanwhile is
# counted too. docs/benchmarks.md, "One NameNode call per storage call".
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
log=${NAMENODE_LOG:-$root/.testenv/logs/namenode.log}
[ -f "$log" ] || { echo "nncalls.sh: no NameNode log at $log (testenv.sh up?)" >&2; exit 2; }
before=$(wc -l < "$log")
start=$(date +%s)
"$@"
rc=$?
echo "nncalls: rc=$rc, $(( $(date +%s) - start )) s, load $(cut -d' ' -f1-3 /proc/loadavg)"
tail -n +$((before + 1)) "$log" | grep FSNamesystem.audit | grep -o 'cmd=[a-zA-Z]*' | sort | uniq -c | sort -rn
echo "nncalls: $(tail -n +$((before + 1)) "$log" | grep -c FSNamesystem.audit) audited NameNode calls"
exit $rc
