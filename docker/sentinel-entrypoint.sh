#!/bin/sh
# Writes Sentinel's configuration from the environment, then runs Redis Sentinel in the foreground.
# Sentinel rewrites its file as it learns (replicas, peers, the current master), so the file lives
# in a directory of its own and is created only when missing: a restarted Sentinel keeps what it knew.
#
#   SENTINEL_MASTER_NAME      the name clients ask for            (default mymaster)
#   SENTINEL_MASTER_HOST      the master's host name or address    (default master)
#   SENTINEL_MASTER_PORT                                           (default 6379)
#   SENTINEL_QUORUM           sentinels that must agree it is down (default 2)
#   SENTINEL_DOWN_AFTER_MS    unreachable this long means down     (default 5000)
#   SENTINEL_FAILOVER_TIMEOUT_MS                                   (default 60000)
#   SENTINEL_AUTH_PASS        the data servers' password           (default: none)
set -eu
conf=/etc/sentinel/sentinel.conf
name=${SENTINEL_MASTER_NAME:-mymaster}
if [ ! -f "$conf" ]; then
  {
    echo "port 26379"
    echo "dir /etc/sentinel"
    echo "sentinel resolve-hostnames yes"
    echo "sentinel announce-hostnames yes"
    echo "sentinel monitor $name ${SENTINEL_MASTER_HOST:-master} ${SENTINEL_MASTER_PORT:-6379} ${SENTINEL_QUORUM:-2}"
    echo "sentinel down-after-milliseconds $name ${SENTINEL_DOWN_AFTER_MS:-5000}"
    echo "sentinel failover-timeout $name ${SENTINEL_FAILOVER_TIMEOUT_MS:-60000}"
    echo "sentinel parallel-syncs $name 1"
    if [ -n "${SENTINEL_AUTH_PASS:-}" ]; then
      echo "sentinel auth-pass $name $SENTINEL_AUTH_PASS"
    fi
  } > "$conf"
fi
exec redis-sentinel "$conf" "$@"
