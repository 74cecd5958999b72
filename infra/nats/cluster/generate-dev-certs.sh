#!/usr/bin/env bash
# Dev/test TLS material for the NATS configs in infra/nats/: a private CA, one server certificate (client port,
# cluster routes and gateways; serverAuth + clientAuth, since routes and gateways dial each other with it) and a
# WebSocket certificate. NEVER commit the output; production uses your PKI for routes/gateways and a publicly
# trusted certificate for the WebSocket listener (Cloudflare Workers verify it against public roots).
#
#   infra/nats/cluster/generate-dev-certs.sh [OUT_DIR] [extra DNS names...]
#
# OUT_DIR defaults to .tmp/nats-dev-tls (git-ignored). Files: ca.pem ca-key.pem server.pem server-key.pem ws.pem
# ws-key.pem — the names the configs expect under /etc/nats/tls/.
set -euo pipefail
cd "$(dirname "$0")/../../.."
out="${1:-.tmp/nats-dev-tls}"
shift || true
mkdir -p "$out"
chmod 700 "$out"
days=30

names=(localhost nats-1.eu.molmesh.internal nats-2.eu.molmesh.internal nats-3.eu.molmesh.internal
  nats-1.us.molmesh.internal nats-2.us.molmesh.internal nats-3.us.molmesh.internal nats.example.com "$@")
san="IP:127.0.0.1"
for n in "${names[@]}"; do san="$san,DNS:$n"; done

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days "$days" \
  -subj "/CN=molmesh dev NATS CA" -keyout "$out/ca-key.pem" -out "$out/ca.pem" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null

issue() { # name eku
  local name=$1 eku=$2
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=molmesh dev $name" \
    -keyout "$out/$name-key.pem" -out "$out/$name.csr" 2>/dev/null
  printf 'subjectAltName=%s\nextendedKeyUsage=%s\nkeyUsage=critical,digitalSignature,keyEncipherment\nbasicConstraints=CA:FALSE\n' \
    "$san" "$eku" >"$out/$name.ext"
  openssl x509 -req -in "$out/$name.csr" -CA "$out/ca.pem" -CAkey "$out/ca-key.pem" -CAcreateserial \
    -days "$days" -extfile "$out/$name.ext" -out "$out/$name.pem" 2>/dev/null
  rm -f "$out/$name.csr" "$out/$name.ext"
}
issue server serverAuth,clientAuth
issue ws serverAuth
chmod 600 "$out"/*-key.pem
echo "dev TLS material in $out (CA valid $days days; SANs: ${san})"
