# lib.sh: what hbase.sh and kafka.sh share: logging, installing missing tools, resolving a
# classpath with Maven, and stopping a process by pid. Sourced, never run. The caller sets NAME
# (for log lines), POM, WORK, CP_FILE (the Maven project and where its classpath goes), JAVA,
# HOST and STOP_TIMEOUT before calling any of these.

log() { printf '%s: %s\n' "$NAME" "$*" >&2; }

die() { log "error: $*"; exit 1; }

# A machine without Java, Maven, curl or ss gets them from Debian's packages when we are root
# (as CI is); otherwise the caller is told what to install.
install_missing() {
  local pkgs=() tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null 2>&1 && continue
    case "$tool" in
      java) [[ -z "${JAVA_HOME:-}" ]] && pkgs+=(openjdk-17-jdk-headless) ;;
      mvn) pkgs+=(maven) ;;
      curl) pkgs+=(curl) ;;
      ss) pkgs+=(iproute2) ;;
    esac
  done
  ((${#pkgs[@]})) || return 0
  if [[ "$(id -u)" -eq 0 ]] && command -v apt-get >/dev/null 2>&1; then
    log "installing ${pkgs[*]}"
    if ! { DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${pkgs[@]}" >/dev/null; }; then
      die "apt-get install ${pkgs[*]} failed"
    fi
  else
    die "missing tools; install: ${pkgs[*]}"
  fi
}

need_java() {
  install_missing java
  command -v "$JAVA" >/dev/null 2>&1 || die "no java found (set JAVA_HOME or put java 17 on PATH)"
}

classpath_ok() {
  [[ -s "$CP_FILE" && "$CP_FILE" -nt "$POM" ]] || return 1
  local jar
  while IFS= read -r jar; do
    [[ -z "$jar" || -f "$jar" ]] || return 1
  done < <(tr ':' '\n' < "$CP_FILE")
}

cmd_fetch() {
  install_missing mvn
  mkdir -p "$WORK"
  local tmp="$CP_FILE.tmp" mlog="$WORK/fetch.log"
  # Offline first: with a warm cache this needs no network and finishes in seconds.
  if mvn -B -q -o -f "$POM" dependency:build-classpath -Dmdep.outputFile="$tmp" >"$mlog" 2>&1; then
    log "fetch: resolved from the local Maven cache"
  else
    log "fetch: resolving from the Maven registry (first run takes a few minutes)"
    if ! mvn -B -q -f "$POM" dependency:build-classpath -Dmdep.outputFile="$tmp" >"$mlog" 2>&1; then
      tail -n 30 "$mlog" >&2
      die "fetch: maven could not resolve $POM (full log: $mlog)"
    fi
  fi
  mv -f "$tmp" "$CP_FILE"
  log "fetch: $(tr ':' '\n' < "$CP_FILE" | grep -c .) jars, classpath in $CP_FILE"
}

ensure_fetched() {
  classpath_ok || cmd_fetch
}

# listener_pid PORT: the pid listening on 127.0.0.1/0.0.0.0:PORT, if ss can tell.
listener_pid() {
  ss -Hltnp "sport = :$1" 2>/dev/null | grep -o 'pid=[0-9]*' | head -n1 | cut -d= -f2 || true
}

port_busy() {
  if command -v ss >/dev/null 2>&1; then
    [[ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]]
  else
    (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null
  fi
}

# stop_pid PID NAME: TERM, wait up to STOP_TIMEOUT, then KILL and wait for it to be gone.
stop_pid() {
  local pid="$1" name="$2" waited=0
  kill -TERM "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null; do
    if (( waited >= STOP_TIMEOUT )); then
      log "$name (pid $pid) still alive after ${STOP_TIMEOUT}s: SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      while kill -0 "$pid" 2>/dev/null; do sleep 0.2; done
      break
    fi
    sleep 1
    waited=$((waited + 1))
  done
  log "$name (pid $pid) stopped after ${waited}s"
}
