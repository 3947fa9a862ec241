#!/usr/bin/env bash
# kafka.sh: a real single-node Kafka (KRaft: broker and controller in one JVM, no ZooKeeper) for
# denorm's tests, built from release jars that Maven resolves into the local Maven cache.
#
#   kafka.sh fetch    resolve the jars (second run reuses ~/.m2 and works offline)
#   kafka.sh start    format the log dir if new, start the broker, wait until it serves
#   kafka.sh stop     stop what start started (by pid), TERM then KILL after a timeout
#   kafka.sh status   say what runs and whether it answers
#   kafka.sh env      print DENORM_KAFKA_URL=... and DENORM_KAFKA_BROKERS=... (for `export $(kafka.sh env)`)
#   kafka.sh probe    produce one message and consume it back with Kafka's console tools
#   kafka.sh reset    stop, then delete data, logs and config (keeps the resolved classpath)
#   kafka.sh logs     print the tail of the broker log
#
# Listeners: clients on 127.0.0.1:9092, the controller on 127.0.0.1:9093, nothing else.
# Data is wiped on every start unless DENORM_KAFKA_KEEP_DATA=1.
#
# Environment: DENORM_TESTENV_DIR (work root, default testenv/work), JAVA_HOME,
# DENORM_KAFKA_START_TIMEOUT (seconds, default 300), DENORM_KAFKA_STOP_TIMEOUT (default 60),
# DENORM_KAFKA_HEAP (default 1g), DENORM_KAFKA_KEEP_DATA, DENORM_KAFKA_PORT_OFFSET.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
POM="$HERE/kafka/pom.xml"
ROOT="${DENORM_TESTENV_DIR:-$HERE/work}"
WORK="$ROOT/kafka"
CP_FILE="$WORK/classpath.txt"
CONF="$WORK/conf"
DATA="$WORK/data"
LOGS="$WORK/logs"
RUN="$WORK/run"
PIDFILE="$RUN/broker.pid"

START_TIMEOUT="${DENORM_KAFKA_START_TIMEOUT:-300}"
STOP_TIMEOUT="${DENORM_KAFKA_STOP_TIMEOUT:-60}"
HEAP="${DENORM_KAFKA_HEAP:-1g}"

HOST=127.0.0.1
# Port offset: the one given, else the one this work dir's running broker was started with
# (start records it), else 0. See choose_ports.
set_ports() {
  OFF="$1"
  BROKER_PORT=$((9092 + OFF))
  CONTROLLER_PORT=$((9093 + OFF))
  PORTS=("$BROKER_PORT" "$CONTROLLER_PORT")
}
OFFSET_FILE="$RUN/offset"
if [[ -n "${DENORM_KAFKA_PORT_OFFSET:-}" ]]; then
  set_ports "$DENORM_KAFKA_PORT_OFFSET"
elif [[ -s "$OFFSET_FILE" ]]; then
  set_ports "$(tr -dc '0-9' < "$OFFSET_FILE")"
else
  set_ports 0
fi
[[ "$OFF" =~ ^[0-9]+$ && "$OFF" -le 50000 ]] || { echo "kafka.sh: bad port offset '$OFF'" >&2; exit 2; }

# The marker names role and work dir, so stop can tell our broker from a reused pid.
MARK="-Ddenorm.testenv=kafka-broker"
MARK_DIR="-Ddenorm.testenv.dir=$WORK"

JAVA="${JAVA_HOME:+$JAVA_HOME/bin/}java"

NAME=kafka.sh
# shellcheck source=lib.sh
source "$HERE/lib.sh"

# ---------------------------------------------------------------------------------- fetch

# ------------------------------------------------------------------------------ processes

# ours: prints the broker pid when the pid file names a live process carrying our marker and
# work dir; nothing otherwise (no file, dead pid, pid reused by a stranger).
ours() {
  local pid cmd
  [[ -f "$PIDFILE" ]] || return 1
  pid="$(tr -dc '0-9' < "$PIDFILE")"
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  cmd="$(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null || true)"
  [[ "$cmd" == *"$MARK "* && "$cmd" == *"$MARK_DIR "* ]] || return 1
  printf '%s\n' "$pid"
}

# Same policy as hbase.sh. check_ports_free: 0 when the ports are free, 1 when only other
# denorm brokers hold them, 2 when anything else does. A denorm broker that no pid file in its
# own work dir names is an orphan (its checkout is gone) and is ended.
check_ports_free() {
  local port pid cmd dir busy=0
  for port in "${PORTS[@]}"; do
    port_busy "$port" || continue
    pid="$(listener_pid "$port")"
    cmd=""
    [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] && cmd="$(tr '\0' ' ' < "/proc/$pid/cmdline")"
    if [[ "$cmd" == *"$MARK "* ]]; then
      dir="$(sed -n 's/.*-Ddenorm\.testenv\.dir=\([^ ]*\) .*/\1/p' <<<"$cmd")"
      if [[ -n "$dir" ]] && ! grep -qsx "$pid" "$dir/run/broker.pid"; then
        log "port $port: ending orphaned denorm Kafka pid $pid (no pid file in $dir names it)"
        stop_pid "$pid" orphan
        continue
      fi
      log "port $port is held by another denorm Kafka, pid $pid, work dir ${dir:-?}"
      ((busy)) || busy=1
    else
      log "port $port is in use by: ${cmd:-an unknown process${pid:+ (pid $pid)}}"
      busy=2
    fi
  done
  return "$busy"
}

# choose_ports: as in hbase.sh, another checkout's broker on the default ports moves this one
# to the first free offset of 100..900 (unless an offset was asked for); anything else fails.
choose_ports() {
  local rc=0 off port free
  check_ports_free || rc=$?
  if ((rc == 1)) && [[ -z "${DENORM_KAFKA_PORT_OFFSET:-}" ]]; then
    for off in 100 200 300 400 500 600 700 800 900; do
      set_ports "$off"
      free=1
      for port in "${PORTS[@]}"; do
        ! port_busy "$port" || free=0
      done
      if ((free)); then
        log "the default ports belong to another denorm Kafka: this one uses port offset $off"
        rc=0
        break
      fi
    done
  fi
  if ((rc != 0)); then
    log "stop the other broker (DENORM_TESTENV_DIR=<its work root> $0 stop) or set DENORM_KAFKA_PORT_OFFSET"
    die "cannot start: ports in use (see above); nothing was started"
  fi
  echo "$OFF" > "$OFFSET_FILE"
}

# ------------------------------------------------------------------------------- config

write_conf() {
  mkdir -p "$CONF"
  cat > "$CONF/server.properties" <<EOF
# written by kafka.sh start; edits are overwritten
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$BROKER_PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$BROKER_PORT
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$DATA/kraft
num.partitions=1
# One node: every internal topic must make do with a single replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Tests join a consumer group and expect it to settle at once, not after the default 3 s.
group.initial.rebalance.delay.ms=0
EOF
  cat > "$CONF/log4j2.properties" <<'EOF'
# kafka.sh start: Kafka 4 logs through slf4j to log4j2.
rootLogger.level=INFO
rootLogger.appenderRef.console.ref=console
appender.console.type=Console
appender.console.name=console
# stderr, so a tool's stdout carries only its data (the probe reads consumed messages there)
appender.console.target=SYSTEM_ERR
appender.console.layout.type=PatternLayout
appender.console.layout.pattern=%d{ISO8601} %-5p [%t] %c{1}: %m%n
logger.kafka.name=kafka
logger.kafka.level=INFO
logger.apache.name=org.apache.kafka
logger.apache.level=INFO
EOF
}

java_cmd() { # the JVM command line shared by the broker and the tools
  printf '%s\0' "$JAVA" "-Dlog4j2.configurationFile=$CONF/log4j2.properties" \
    "-Djava.net.preferIPv4Stack=true" "-Djava.io.tmpdir=$DATA/tmp" -cp "$(cat "$CP_FILE")"
}

run_tool() { # run_tool MAINCLASS ARGS...: a Kafka command-line tool in the foreground
  local jvm=()
  mapfile -d '' jvm < <(java_cmd)
  "${jvm[@]}" -Xmx256m "$@"
}

# A KRaft log dir must be formatted once with a cluster id before the first start.
format_storage() {
  [[ -f "$DATA/kraft/meta.properties" ]] && return 0
  local id
  # A cluster id is 16 random bytes in URL-safe base64 without padding (22
  # characters). One starting with "-" would be taken for an option by the
  # tool's argument parser (Kafka's own generator never makes one): draw again.
  id="-"
  while [[ "$id" == -* ]]; do
    id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')"
  done
  log "formatting $DATA/kraft with cluster id $id"
  if ! run_tool kafka.tools.StorageTool format -t "$id" -c "$CONF/server.properties" \
      >"$LOGS/format.log" 2>&1; then
    cat "$LOGS/format.log" >&2
    die "formatting the KRaft log dir failed"
  fi
}

# ------------------------------------------------------------------------------ readiness

broker_ready() {
  grep -q 'Kafka Server started' "$LOGS/broker.log" 2>/dev/null &&
    (exec 3<>"/dev/tcp/$HOST/$BROKER_PORT") 2>/dev/null
}

fail_start() {
  log "error: $*"
  if [[ -f "$LOGS/broker.log" ]]; then
    log "last lines of $LOGS/broker.log:"
    tail -n 40 "$LOGS/broker.log" >&2
  fi
  cmd_stop || true
  exit 1
}

# -------------------------------------------------------------------------------- commands

cmd_start() {
  need_java
  install_missing ss
  mkdir -p "$RUN" "$LOGS"
  # Engineers share a work tree: a second start waits for the first instead of racing it.
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$RUN/start.lock"
    flock -w "$START_TIMEOUT" 9 || die "another kafka.sh start holds $RUN/start.lock"
  fi
  local pid
  pid="$(ours || true)"
  if [[ -n "$pid" ]] && broker_ready; then
    log "already running (pid $pid)"
    return 0
  fi
  if [[ -n "$pid" ]]; then
    log "found an unhealthy broker of ours; stopping it first"
    cmd_stop
  fi
  rm -f "$PIDFILE"
  choose_ports
  ensure_fetched
  if [[ "${DENORM_KAFKA_KEEP_DATA:-0}" != 1 ]]; then
    rm -rf "$DATA"
  fi
  mkdir -p "$DATA/tmp"
  write_conf
  local started=$SECONDS deadline=$((SECONDS + START_TIMEOUT))
  format_storage

  local jvm=()
  mapfile -d '' jvm < <(java_cmd)
  # The marker goes right after the java binary so /proc/PID/cmdline carries it.
  jvm=("${jvm[0]}" "$MARK" "$MARK_DIR" "-Xms256m" "-Xmx$HEAP" "-Dkafka.logs.dir=$LOGS" "${jvm[@]:1}")
  # Detached, no stdin: survives this shell and never waits on a terminal (CI has none).
  # 9>&-: the JVM must not inherit start's lock, or it would hold it for its whole life.
  if command -v setsid >/dev/null 2>&1; then
    setsid "${jvm[@]}" kafka.Kafka "$CONF/server.properties" </dev/null >"$LOGS/broker.log" 2>&1 9>&- &
  else
    nohup "${jvm[@]}" kafka.Kafka "$CONF/server.properties" </dev/null >"$LOGS/broker.log" 2>&1 9>&- &
  fi
  echo $! > "$PIDFILE"
  log "broker started, pid $!, log $LOGS/broker.log"

  while ! broker_ready; do
    # kill -0, not ours(): right after launch the pid is still the forked shell.
    kill -0 "$(cat "$PIDFILE")" 2>/dev/null || fail_start "broker exited during start-up"
    (( SECONDS < deadline )) || fail_start "broker not ready after ${START_TIMEOUT}s"
    sleep 1
  done
  log "ready after $((SECONDS - started))s: bootstrap $HOST:$BROKER_PORT"
  check_loopback_only
}

check_loopback_only() {
  command -v ss >/dev/null 2>&1 || return 0
  local pid bad
  pid="$(ours || true)"
  [[ -n "$pid" ]] || return 0
  bad="$(ss -Hltnp | grep -E "pid=$pid," | awk '{print $4}' \
    | grep -v -E '^(127\.[0-9.]+|\[::ffff:127\.[0-9.]+\]|\[::1\]):[0-9]+$' || true)"
  if [[ -n "$bad" ]]; then
    log "error: listening beyond loopback: $(tr '\n' ' ' <<<"$bad")"
    cmd_stop || true
    exit 1
  fi
}

cmd_stop() {
  local pid
  if pid="$(ours)"; then
    stop_pid "$pid" broker
  else
    log "nothing of ours was running"
  fi
  rm -f "$PIDFILE" "$OFFSET_FILE"
}

cmd_status() {
  local pid
  pid="$(ours || true)"
  if [[ -z "$pid" ]]; then
    echo "broker: not running"
    return 1
  fi
  if broker_ready; then
    echo "broker: running, pid $pid, serving on $HOST:$BROKER_PORT"
  else
    echo "broker: running, pid $pid, NOT ready"
    return 1
  fi
}

cmd_env() {
  echo "DENORM_KAFKA_URL=kafka://$HOST:$BROKER_PORT"
  echo "DENORM_KAFKA_BROKERS=$HOST:$BROKER_PORT"
}

cmd_probe() {
  need_java
  ensure_fetched
  local topic want got
  topic="denorm-probe-$(date +%s)-$$"
  want="probe-$RANDOM-$RANDOM"
  printf '%s\n' "$want" | run_tool org.apache.kafka.tools.ConsoleProducer \
    --bootstrap-server "$HOST:$BROKER_PORT" --topic "$topic" >"$LOGS/probe.log" 2>&1 ||
    { cat "$LOGS/probe.log" >&2; die "probe: producing to $topic failed"; }
  got="$(run_tool org.apache.kafka.tools.consumer.ConsoleConsumer \
    --bootstrap-server "$HOST:$BROKER_PORT" --topic "$topic" --from-beginning \
    --max-messages 1 --timeout-ms 60000 2>>"$LOGS/probe.log")" ||
    { cat "$LOGS/probe.log" >&2; die "probe: consuming from $topic failed"; }
  [[ "$got" == "$want" ]] || die "probe: consumed '$got', produced '$want'"
  echo "probe ok: produced and consumed one message on topic $topic"
}

cmd_reset() {
  cmd_stop
  rm -rf "$DATA" "$LOGS" "$CONF" "$RUN"
  log "reset: data, logs, config and pid file removed (classpath kept)"
}

cmd_logs() {
  [[ -f "$LOGS/broker.log" ]] && tail -n "${1:-50}" "$LOGS/broker.log"
  return 0
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
