#!/usr/bin/env bash
# Validates every NATS config under infra/nats/ with the installed nats-server, on loopback, with throwaway TLS
# material and nkeys in a temp dir (deleted on exit; nothing is written into the repo):
#   1. renders each server file (production paths/hosts/ports → temp dir and 127.0.0.1 ports, placeholders →
#      generated keys) and runs `nats-server -t` on it;
#   2. starts the 3-server cluster, creates the heartbeat bucket with 3 replicas and runs check-permissions.ts
#      (the real GPU node with its .creds over TLS, the edge's hop functions over wss, and the denials);
#   3. starts the eu+us supercluster (6 servers) and checks the bucket across regions and queue-group locality.
#
#   infra/nats/check-configs.sh            (needs nats-server, openssl, node; ~1 min; run from anywhere)
#   KEEP_TMP=1 infra/nats/check-configs.sh (keep the temp dir and server logs for a look)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
nats="$root/infra/nats"
tmp="$(mktemp -d)"
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ "${KEEP_TMP:-}" == 1 ]]; then echo "kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT

"$nats/cluster/generate-dev-certs.sh" "$tmp/tls" >/dev/null
node "$nats/generate-dev-credentials.mjs" "$tmp/creds" gpu-node-a gpu-node-b >/dev/null

# Loopback ports: region eu = 0, us = 1; server n = 1..3.
port() { echo $(($2 + $1 * 10 + $3)); } # region base n
region_index() { [[ $1 == eu ]] && echo 0 || echo 1; }

# render REGION N → prints the path of the rendered top-level file for that server.
# Copies infra/nats/{cluster,supercluster} into a per-server dir and rewrites production values.
render() {
  local region=$1 n=$2 top=$3 r dir
  r=$(region_index "$region")
  dir="$tmp/render/$region-$n"
  mkdir -p "$dir" "$tmp/data/$region-$n"
  cp -r "$nats/cluster" "$nats/supercluster" "$dir/"
  cp "$tmp/creds/accounts.conf" "$dir/cluster/accounts.conf"
  local -a sed_args=(
    -e "s#/etc/nats/tls/#$tmp/tls/#g"
    -e "s#/var/lib/nats/jetstream#$tmp/data/$region-$n#g"
    -e "s#\"0.0.0.0:4222\"#\"127.0.0.1:$(port "$r" 14200 "$n")\"#g"
    -e "s#\"0.0.0.0:6222\"#\"127.0.0.1:$(port "$r" 16200 "$n")\"#g"
    -e "s#\"0.0.0.0:7222\"#\"127.0.0.1:$(port "$r" 17200 "$n")\"#g"
    -e "s#\"0.0.0.0:443\"#\"127.0.0.1:$(port "$r" 18400 "$n")\"#g"
    -e "s#\"127.0.0.1:8222\"#\"127.0.0.1:$(port "$r" 18200 "$n")\"#g"
  )
  local reg k
  for reg in eu us; do
    for k in 1 2 3; do
      sed_args+=(-e "s#nats-$k\.$reg\.molmesh\.internal:6222#127.0.0.1:$(port "$(region_index $reg)" 16200 "$k")#g")
      sed_args+=(-e "s#nats-$k\.$reg\.molmesh\.internal:7222#127.0.0.1:$(port "$(region_index $reg)" 17200 "$k")#g")
    done
  done
  find "$dir" -name '*.conf' -exec sed -i "${sed_args[@]}" {} +
  local leftover='^[^#]*(0\.0\.0\.0|molmesh\.internal|/etc/nats|/var/lib/nats|REPLACE_WITH)'
  if grep -rqE --include='*.conf' "$leftover" "$dir"; then
    echo "render left a production value in $dir:" >&2
    grep -rnE --include='*.conf' "$leftover" "$dir" >&2
    exit 1
  fi
  echo "$dir/$top"
}

start() { # config log
  nats-server -c "$1" >"$2" 2>&1 &
  pids+=($!)
}
wait_healthy() { # region n...
  local region=$1 r n i
  r=$(region_index "$region")
  shift
  for n in "$@"; do
    for i in $(seq 1 120); do
      if curl -fsS "http://127.0.0.1:$(port "$r" 18200 "$n")/healthz" >/dev/null 2>&1; then break; fi
      if [[ $i == 120 ]]; then
        echo "server $region-$n not healthy; log:" >&2
        tail -20 "$tmp/$region-$n.log" >&2
        exit 1
      fi
      sleep 0.5
    done
  done
}
stop_all() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}
urls() { # scheme region base → comma-separated loopback URLs of the region's 3 servers
  local r
  r=$(region_index "$2")
  echo "$1://127.0.0.1:$(port "$r" "$3" 1),$1://127.0.0.1:$(port "$r" "$3" 2),$1://127.0.0.1:$(port "$r" "$3" 3)"
}
echo "1. nats-server -t on every server file (rendered for loopback)"
configs=()
for n in 1 2 3; do
  cfg=$(render eu "$n" "cluster/nats-$n.conf")
  configs+=("$cfg")
  cfg=$(render eu "$n" "supercluster/eu/nats-$n.conf")
  configs+=("$cfg")
  cfg=$(render us "$n" "supercluster/us/nats-$n.conf")
  configs+=("$cfg")
done
for cfg in "${configs[@]}"; do
  out=$(nats-server -t -c "$cfg" 2>&1) || { echo "$out" >&2; exit 1; }
done
echo "  ok   ${#configs[@]} server files are valid for $(nats-server --version)"

export NODE_EXTRA_CA_CERTS="$tmp/tls/ca.pem" CHECK_CREDS_DIR="$tmp/creds"
run_check() {
  (cd "$root" && node --no-warnings --experimental-websocket --import tsx test/nats/check-permissions.ts "$1")
}

echo "2. the 3-server cluster (cluster/nats-{1,2,3}.conf)"
for n in 1 2 3; do start "$tmp/render/eu-$n/cluster/nats-$n.conf" "$tmp/eu-$n.log"; done
wait_healthy eu 1 2 3
CHECK_TCP="$(urls tls eu 14200)" CHECK_WS="$(urls wss eu 18400)" CHECK_LOGS="$tmp/eu-1.log,$tmp/eu-2.log,$tmp/eu-3.log" \
  run_check cluster
stop_all

echo "3. the eu+us supercluster (supercluster/{eu,us}/nats-{1,2,3}.conf)"
rm -rf "$tmp/data"
for n in 1 2 3; do
  mkdir -p "$tmp/data/eu-$n" "$tmp/data/us-$n"
  start "$tmp/render/eu-$n/supercluster/eu/nats-$n.conf" "$tmp/sc-eu-$n.log"
  start "$tmp/render/us-$n/supercluster/us/nats-$n.conf" "$tmp/sc-us-$n.log"
done
wait_healthy eu 1 2 3
wait_healthy us 1 2 3
CHECK_EU_TCP="$(urls tls eu 14200)" CHECK_US_TCP="$(urls tls us 14200)" CHECK_US_WS="$(urls wss us 18400)" \
  CHECK_LOGS="$(ls "$tmp"/sc-*.log | paste -sd,)" run_check supercluster
stop_all
echo "all NATS configs checked"
