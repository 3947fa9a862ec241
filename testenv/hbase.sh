#!/usr/bin/env bash
# hbase.sh: a real, standalone HBase plus its Thrift2 gateway for denorm's tests, built from
# release artifacts that Maven resolves into the local Maven cache (no tarball, no HDFS).
#
#   hbase.sh fetch    resolve the jars (second run reuses ~/.m2 and works offline)
#   hbase.sh start    start master+regionserver+ZooKeeper (one JVM), then Thrift2; wait until ready
#   hbase.sh stop     stop what start started (by pid), TERM then KILL after a timeout
#   hbase.sh status   say what runs and whether it answers
#   hbase.sh env      print DENORM_HBASE_URL=... and DENORM_HBASE_JMX=... (for `export $(hbase.sh env)`)
#   hbase.sh probe    create a table, put and get a cell through Thrift2, drop the table
#   hbase.sh reset    stop, then delete the data and logs (keeps the resolved classpath)
#   hbase.sh logs     print the tail of both logs
#
# Every listener is bound to 127.0.0.1. Data lives under the work dir and is wiped on every
# start unless DENORM_HBASE_KEEP_DATA=1, so each run begins clean: stop uses SIGTERM, which
# HBase treats as a region server crash, and tests should not depend on crash recovery.
#
# Environment: DENORM_TESTENV_DIR (work root, default testenv/work), JAVA_HOME,
# DENORM_HBASE_START_TIMEOUT (seconds, default 420), DENORM_HBASE_STOP_TIMEOUT (default 60),
# DENORM_HBASE_HEAP (default 1g, per JVM), DENORM_HBASE_KEEP_DATA, DENORM_HBASE_PORT_OFFSET,
# DENORM_HBASE_EXTRA_CONF (space-separated name=value settings added to hbase-site.xml, for an
# experiment on a second instance; a later one of the same name wins).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/hbase/pom.xml"
PROBE_SRC="$HERE/hbase/Probe.java"
ROOT="${DENORM_TESTENV_DIR:-$HERE/work}"
WORK="$ROOT/hbase"
CP_FILE="$WORK/classpath.txt"
CONF="$WORK/conf"
DATA="$WORK/data"
LOGS="$WORK/logs"
RUN="$WORK/run"

START_TIMEOUT="${DENORM_HBASE_START_TIMEOUT:-420}"
STOP_TIMEOUT="${DENORM_HBASE_STOP_TIMEOUT:-60}"
HEAP="${DENORM_HBASE_HEAP:-1g}"

HOST=127.0.0.1
# An offset moves every port at once, so a second instance (another checkout, a test of this
# script) can run beside the usual one. It is the one given, else the one this work dir's
# running instance was started with (start records it), else 0.
set_ports() {
  OFF="$1"
  ZK_PORT=$((2181 + OFF))
  MASTER_PORT=$((16000 + OFF))
  MASTER_INFO_PORT=$((16010 + OFF))
  RS_PORT=$((16020 + OFF))
  RS_INFO_PORT=$((16030 + OFF))
  THRIFT_PORT=$((9090 + OFF))
  THRIFT_INFO_PORT=$((9095 + OFF))
  PORTS=("$ZK_PORT" "$MASTER_PORT" "$MASTER_INFO_PORT" "$RS_PORT" "$RS_INFO_PORT" "$THRIFT_PORT" "$THRIFT_INFO_PORT")
}
OFFSET_FILE="$WORK/run/offset"
if [[ -n "${DENORM_HBASE_PORT_OFFSET:-}" ]]; then
  set_ports "$DENORM_HBASE_PORT_OFFSET"
elif [[ -s "$OFFSET_FILE" ]]; then
  set_ports "$(tr -dc '0-9' < "$OFFSET_FILE")"
else
  set_ports 0
fi
[[ "$OFF" =~ ^[0-9]+$ && "$OFF" -le 40000 ]] || { echo "hbase.sh: bad port offset '$OFF'" >&2; exit 2; }

# Each JVM carries a marker naming its role and work dir, so stop and the stale-process check
# can tell our processes from anything else, including a reused pid.
MARK_MASTER="-Ddenorm.testenv=hbase-master"
MARK_THRIFT="-Ddenorm.testenv=hbase-thrift"
MARK_DIR="-Ddenorm.testenv.dir=$WORK"

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

# Java 17 refuses reflective access into java.base unless opened. Seen at start without them:
# java.lang (JAXB class injection while the web UI starts; the master exits) and java.nio (the
# Unsafe probe, then slower byte access). The rest open what shaded Netty (direct buffers),
# reflection helpers and Kerberos code reach for in paths a plain start does not exercise; none
# of them changes behaviour otherwise.
JDK17_OPTS=(
  --add-opens=java.base/java.lang=ALL-UNNAMED
  --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
  --add-opens=java.base/java.nio=ALL-UNNAMED
  --add-opens=java.base/sun.nio.ch=ALL-UNNAMED
  --add-opens=java.base/java.util=ALL-UNNAMED
  --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
  --add-exports=java.base/jdk.internal.misc=ALL-UNNAMED
  --add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
  -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
)

NAME=hbase.sh
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# ---------------------------------------------------------------------------------- fetch

# ------------------------------------------------------------------------------ processes

# ours PIDFILE MARK: prints the pid when the file names a live process that carries our marker
# and our work dir; anything else (no file, dead pid, pid reused by a stranger) prints nothing.
ours() {
  local file="$1" mark="$2" pid cmd
  [[ -f "$file" ]] || return 1
  pid="$(tr -dc '0-9' < "$file")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  cmd="$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"$mark "* && "$cmd" == *"$MARK_DIR "* ]] || return 1
  printf '%s\n' "$pid"
}

# check_ports_free: 0 when all ports are free, 1 when only other denorm HBases hold some, 2
# when anything else does. A denorm HBase that no pid file in its own work dir
# names is an orphan (its checkout was deleted, say a previous CI clone, or its pid files were):
# nobody can stop it by pid any more, so it is ended here. Anything else is reported and left
# alone. The check looks at the pid file rather than the folder because a running HBase
# recreates parts of its work dir.
check_ports_free() {
  local port pid cmd dir busy=0
  for port in "${PORTS[@]}"; do
    port_busy "$port" || continue
    pid="$(listener_pid "$port")"
    cmd=""
    [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] && cmd="$(tr '\0' ' ' < "/proc/$pid/cmdline")"
    if [[ "$cmd" == *"-Ddenorm.testenv=hbase-"* ]]; then
      dir="$(sed -n 's/.*-Ddenorm\.testenv\.dir=\([^ ]*\) .*/\1/p' <<<"$cmd")"
      if [[ -n "$dir" ]] && ! grep -qsx "$pid" "$dir/run/master.pid" "$dir/run/thrift.pid"; then
        log "port $port: ending orphaned denorm HBase pid $pid (no pid file in $dir names it)"
        stop_pid "$pid" "orphan"
        continue
      fi
      log "port $port is held by another denorm HBase, pid $pid, work dir ${dir:-?}"
      ((busy)) || busy=1
    else
      log "port $port is in use by: ${cmd:-an unknown process${pid:+ (pid $pid)}}"
      busy=2
    fi
  done
  return "$busy"
}

all_ports_free() {
  local port
  for port in "${PORTS[@]}"; do
    ! port_busy "$port" || return 1
  done
}

# choose_ports: keep the current ports when free. When only another denorm HBase (a second
# checkout, say a local CI run beside the shared work tree) holds them and no offset was
# asked for, move this instance to the first free offset of 100, 200, ... 900 instead of
# failing; `env` then prints the moved ports. Anything else holding a port stops the start.
choose_ports() {
  local rc=0 off
  check_ports_free || rc=$?
  if ((rc == 1)) && [[ -z "${DENORM_HBASE_PORT_OFFSET:-}" ]]; then
    for off in 100 200 300 400 500 600 700 800 900; do
      set_ports "$off"
      if all_ports_free; then
        log "the default ports belong to another denorm HBase: this one uses port offset $off"
        rc=0
        break
      fi
    done
  fi
  if ((rc != 0)); then
    log "stop the other instance (DENORM_TESTENV_DIR=<its work root> $0 stop) or set DENORM_HBASE_PORT_OFFSET"
    die "cannot start: ports in use (see above); nothing was started"
  fi
  echo "$OFF" > "$OFFSET_FILE"
}

# ------------------------------------------------------------------------------- config

# The doctor reads the slow log, so the region server keeps its online ring buffer of slow
# and large calls (off by default) and the thresholds sit below HBase's defaults (10 s, 100 MB).
# A client scan returns at most 2 MB per call (hbase.client.scanner.max.result.size) plus the
# cell that crossed it, so ordinary scans stay under 3 MB and a scan of rows with 2 MB cells,
# which the doctor's live test drives, goes over it. 5 s of processing stays rare even on a
# busy CI machine.
SLOW_CALL_MS=5000
LARGE_CALL_BYTES=3145728

write_conf() {
  mkdir -p "$CONF"
  local prop
  {
    printf '<?xml version="1.0"?>\n<!-- written by hbase.sh start; edits are overwritten -->\n<configuration>\n'
    for prop in \
      "hbase.cluster.distributed=false" \
      "hbase.rootdir=file://$DATA/hbase" \
      "hbase.tmp.dir=$DATA/tmp" \
      "hbase.zookeeper.property.dataDir=$DATA/zookeeper" \
      "hbase.zookeeper.quorum=$HOST" \
      "hbase.zookeeper.property.clientPort=$ZK_PORT" \
      "hbase.zookeeper.property.clientPortAddress=$HOST" \
      "hbase.zookeeper.property.tickTime=6000" \
      "zookeeper.session.timeout=90000" \
      "hbase.unsafe.stream.capability.enforce=false" \
      "hbase.localcluster.assign.random.ports=false" \
      "hbase.master.port=$MASTER_PORT" \
      "hbase.master.info.port=$MASTER_INFO_PORT" \
      "hbase.regionserver.port=$RS_PORT" \
      "hbase.regionserver.info.port=$RS_INFO_PORT" \
      "hbase.master.ipc.address=$HOST" \
      "hbase.regionserver.ipc.address=$HOST" \
      "hbase.master.info.bindAddress=$HOST" \
      "hbase.regionserver.info.bindAddress=$HOST" \
      "hbase.regionserver.thrift.ipaddress=$HOST" \
      "hbase.regionserver.thrift.port=$THRIFT_PORT" \
      "hbase.regionserver.thrift.framed=false" \
      "hbase.regionserver.thrift.compact=false" \
      "hbase.regionserver.thrift.http=false" \
      "hbase.thrift.info.bindAddress=$HOST" \
      "hbase.thrift.info.port=$THRIFT_INFO_PORT" \
      "hbase.master.balancer.stochastic.runMaxSteps=false" \
      "hbase.regionserver.slowlog.buffer.enabled=true" \
      "hbase.ipc.warn.response.time=$SLOW_CALL_MS" \
      "hbase.ipc.warn.response.size=$LARGE_CALL_BYTES" \
      ${DENORM_HBASE_EXTRA_CONF:-}; do
      printf '  <property><name>%s</name><value>%s</value></property>\n' "${prop%%=*}" "${prop#*=}"
    done
    printf '</configuration>\n'
  } > "$CONF/hbase-site.xml"
  cat > "$CONF/log4j.properties" <<'EOF'
# hbase.sh start: HBase 2.5 from Maven logs through slf4j-reload4j, so log4j 1.x syntax.
log4j.rootLogger=INFO,console
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
log4j.logger.org.apache.zookeeper=WARN
log4j.logger.org.apache.hadoop.metrics2=WARN
EOF
}

# launch NAME MARK LOGFILE PIDFILE MAINCLASS ARGS...: a detached JVM with no stdin, so it
# outlives this shell and never waits on a terminal (CI has none).
launch() {
  local name="$1" mark="$2" logfile="$3" pidfile="$4"
  shift 4
  local jvm=(
    "$JAVA" "-Xms256m" "-Xmx$HEAP" "$mark" "$MARK_DIR"
    "${JDK17_OPTS[@]}"
    "-Djava.io.tmpdir=$DATA/tmp"
    "-Djava.net.preferIPv4Stack=true"
    "-Dlog4j.configuration=file:$CONF/log4j.properties"
    "-Dhbase.log.dir=$LOGS"
    -cp "$CONF:$(cat "$CP_FILE")"
    "$@"
  )
  # 9>&-: the JVM must not inherit start's lock, or it would hold it for its whole life.
  if command -v setsid >/dev/null 2>&1; then
    setsid "${jvm[@]}" </dev/null >"$logfile" 2>&1 9>&- &
  else
    nohup "${jvm[@]}" </dev/null >"$logfile" 2>&1 9>&- &
  fi
  echo $! > "$pidfile"
  log "$name started, pid $!, log $logfile"
}

# ------------------------------------------------------------------------------ readiness

jmx() { curl -fsS --max-time 5 "http://$HOST:$1/jmx?qry=$2" 2>/dev/null; }

jmx_num() { # jmx_num JSON KEY: the integer value of "KEY": N, or nothing
  sed -n "s/.*\"$2\" *: *\\([0-9][0-9]*\\).*/\\1/p" <<<"$1" | head -n1
}

master_ready() {
  local j init rs
  j="$(jmx "$MASTER_INFO_PORT" 'Hadoop:service=HBase,name=Master,sub=Server')" || return 1
  init="$(jmx_num "$j" masterFinishedInitializationTime)"
  rs="$(jmx_num "$j" numRegionServers)"
  [[ -n "$init" && "$init" -gt 0 && -n "$rs" && "$rs" -ge 1 ]]
}

rs_ready() {
  jmx "$RS_INFO_PORT" 'Hadoop:service=HBase,name=RegionServer,sub=Regions' | grep -q 'table_namespace_region'
}

# An open port is not enough: the kernel queues connections before the server accepts any. So
# send a real Thrift call, unframed binary protocol, to a method that does not exist
# (version 1 CALL "ping", seqid 1, empty struct) and expect the server's answer, which starts
# with version 1 EXCEPTION (80 01 00 03). That also proves the wire format the Go client uses.
thrift_ready() {
  local reply
  # shellcheck disable=SC2016 # $0/$1 expand in the inner shell on purpose
  reply="$(timeout 10 bash -c 'exec 3<>"/dev/tcp/$0/$1" || exit 1
    printf "\x80\x01\x00\x01\x00\x00\x00\x04ping\x00\x00\x00\x01\x00" >&3
    head -c 4 <&3 | od -An -tx1' "$HOST" "$THRIFT_PORT" 2>/dev/null)" || return 1
  [[ "$(tr -d ' \n' <<<"$reply")" == 80010003 ]]
}

fail_start() {
  local logfile="$1"
  shift
  log "error: $*"
  if [[ -f "$logfile" ]]; then
    log "last lines of $logfile:"
    tail -n 40 "$logfile" >&2
  fi
  cmd_stop || true
  exit 1
}

# wait_for NAME PIDFILE LOGFILE CHECK: poll CHECK until it passes, the process dies, or
# the shared start deadline passes.
wait_for() {
  local name="$1" pidfile="$2" logfile="$3" check="$4"
  while ! "$check"; do
    # kill -0 rather than ours(): for a moment after launch the pid is still the forked shell,
    # whose command line lacks the marker.
    kill -0 "$(cat "$pidfile")" 2>/dev/null || fail_start "$logfile" "$name exited during start-up"
    (( SECONDS < DEADLINE )) || fail_start "$logfile" "$name not ready after ${START_TIMEOUT}s"
    sleep 2
  done
}

# -------------------------------------------------------------------------------- commands

cmd_start() {
  need_java
  install_missing curl ss
  mkdir -p "$RUN" "$LOGS"
  # Engineers share a work tree: a second start waits for the first instead of racing it.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$RUN/start.lock"
    flock -w "$START_TIMEOUT" 9 || die "another hbase.sh start holds $RUN/start.lock"
  fi
  local mpid tpid _
  mpid="$(ours "$RUN/master.pid" "$MARK_MASTER" || true)"
  tpid="$(ours "$RUN/thrift.pid" "$MARK_THRIFT" || true)"
  if [[ -n "$mpid" && -n "$tpid" ]]; then
    # Both alive: a slow answer on a busy machine is no reason to restart what others use, so
    # give it a minute before calling it unhealthy.
    for _ in $(seq 30); do
      if master_ready && thrift_ready; then
        log "already running (master pid $mpid, thrift pid $tpid)"
        return 0
      fi
      sleep 2
    done
  fi
  if [[ -n "$mpid" || -n "$tpid" ]]; then
    log "found a half-started or unhealthy instance of ours; stopping it first"
    cmd_stop
  fi
  rm -f "$RUN/master.pid" "$RUN/thrift.pid" # stale files of processes that are gone
  choose_ports
  ensure_fetched

  if [[ "${DENORM_HBASE_KEEP_DATA:-0}" != 1 ]]; then
    rm -rf "$DATA"
  fi
  mkdir -p "$DATA/tmp"
  write_conf
  local started=$SECONDS
  DEADLINE=$((SECONDS + START_TIMEOUT))

  launch master "$MARK_MASTER" "$LOGS/master.log" "$RUN/master.pid" \
    org.apache.hadoop.hbase.master.HMaster start
  wait_for master "$RUN/master.pid" "$LOGS/master.log" master_ready
  wait_for regionserver "$RUN/master.pid" "$LOGS/master.log" rs_ready
  log "master and region server ready after $((SECONDS - started))s"

  launch thrift2 "$MARK_THRIFT" "$LOGS/thrift.log" "$RUN/thrift.pid" \
    org.apache.hadoop.hbase.thrift2.ThriftServer \
    -b "$HOST" -p "$THRIFT_PORT" --infoport "$THRIFT_INFO_PORT" -threadpool start
  wait_for thrift2 "$RUN/thrift.pid" "$LOGS/thrift.log" thrift_ready
  log "ready after $((SECONDS - started))s: thrift2 on $HOST:$THRIFT_PORT (binary protocol, unframed)"
  check_loopback_only
}

# A listener of ours on anything but loopback is a configuration bug: fail loudly.
check_loopback_only() {
  command -v ss >/dev/null 2>&1 || return 0
  local pids=() p bad
  for p in "$RUN/master.pid:$MARK_MASTER" "$RUN/thrift.pid:$MARK_THRIFT"; do
    p="$(ours "${p%%:*}" "${p#*:}" || true)"
    [[ -n "$p" ]] && pids+=("$p")
  done
  ((${#pids[@]})) || return 0
  bad="$(ss -Hltnp | grep -E "pid=($(IFS='|'; echo "${pids[*]}"))," | awk '{print $4}' \
    | grep -v -E '^(127\.[0-9.]+|\[::ffff:127\.[0-9.]+\]|\[::1\]):[0-9]+$' || true)"
  if [[ -n "$bad" ]]; then
    log "error: listening beyond loopback: $(tr '\n' ' ' <<<"$bad")"
    cmd_stop || true
    exit 1
  fi
}

cmd_stop() {
  local pid any=0
  if pid="$(ours "$RUN/thrift.pid" "$MARK_THRIFT")"; then
    stop_pid "$pid" thrift2
    any=1
  fi
  if pid="$(ours "$RUN/master.pid" "$MARK_MASTER")"; then
    stop_pid "$pid" master
    any=1
  fi
  rm -f "$RUN/thrift.pid" "$RUN/master.pid" "$OFFSET_FILE"
  [[ $any -eq 1 ]] || log "nothing of ours was running"
  return 0
}

cmd_status() {
  local mpid tpid rc=0
  mpid="$(ours "$RUN/master.pid" "$MARK_MASTER" || true)"
  tpid="$(ours "$RUN/thrift.pid" "$MARK_THRIFT" || true)"
  if [[ -n "$mpid" ]]; then
    if master_ready && rs_ready; then echo "master+regionserver: running, pid $mpid, ready"
    else echo "master+regionserver: running, pid $mpid, NOT ready"; rc=1; fi
  else
    echo "master+regionserver: not running"; rc=1
  fi
  if [[ -n "$tpid" ]]; then
    if thrift_ready; then echo "thrift2: running, pid $tpid, accepting on $HOST:$THRIFT_PORT"
    else echo "thrift2: running, pid $tpid, NOT accepting"; rc=1; fi
  else
    echo "thrift2: not running"; rc=1
  fi
  echo "logs: $LOGS"
  return $rc
}

cmd_env() {
  echo "DENORM_HBASE_URL=hbase://$HOST:$THRIFT_PORT"
  echo "DENORM_HBASE_JMX=http://$HOST:$RS_INFO_PORT/jmx"
}

cmd_probe() {
  need_java
  ensure_fetched
  "$JAVA" -cp "$(cat "$CP_FILE")" "$PROBE_SRC" "$HOST" "$THRIFT_PORT"
}

cmd_reset() {
  cmd_stop
  rm -rf "$DATA" "$LOGS" "$CONF" "$RUN"
  log "reset: data, logs, config and pid files removed (classpath kept)"
}

cmd_logs() {
  local f
  for f in "$LOGS/master.log" "$LOGS/thrift.log"; do
    [[ -f "$f" ]] || continue
    echo "==> $f <=="
    tail -n "${1:-50}" "$f"
  done
}

case "${1:-}" in
  fetch) cmd_fetch ;;
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) cmd_env ;;
  probe) cmd_probe ;;
  reset) cmd_reset ;;
  logs) shift; cmd_logs "$@" ;;
  *)
    echo "usage: $0 fetch|start|stop|status|env|probe|reset|logs [N]" >&2
    exit 2
    ;;
esac
