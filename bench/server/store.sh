#!/usr/bin/env bash
# One service on a store, the load of run.sh at shorter phases: HTTP (wrk -t1 -c64, 1,000 users in rotation), then
# gRPC ShouldRateLimit (h2load -c1 -m64, one user), 5 s each after a warm-up of the same load in rounds of 3 s until
# one compiles fewer than 100 methods (jstat; at most 5 rounds: on 2 cores a single 3 s round left the JIT compiling
# through the measured window). For before/after comparisons of
# the Redis and PostgreSQL service paths: run it for each jar in turn, interleaved, on the same store.
# DESCRIPTORS=3 sends three limited descriptors a request instead of one (user, ip, org; post3.lua over HTTP, strict
# semantics: one all-or-nothing store call; a frame built by RlsFrame.java over gRPC, envoy's semantics by default).
# Usage: [DESCRIPTORS=3] bench/server/store.sh <sluice-server-*-all.jar> <store URI> <label>
#   e.g. bench/server/store.sh server/target/sluice-server-0.1.0-SNAPSHOT-all.jar redis://127.0.0.1:6390 after
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jar="$1"; store="$2"; label="$3"; descriptors="${DESCRIPTORS:-1}"
case "$descriptors" in 1) lua=post.lua ;; 3) lua=post3.lua ;; *) echo "DESCRIPTORS is 1 or 3" >&2; exit 2 ;; esac
tmp="$(mktemp -d)"
java -jar "$jar" serve --config "$root/bench/server/bench-rules.yaml" --store "$store" --http 127.0.0.1:8088 \
  --grpc 127.0.0.1:8089 >"$tmp/sluice.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 600); do curl -s -o /dev/null http://127.0.0.1:8088/healthz && break; sleep 0.1; done
curl -s -o /dev/null http://127.0.0.1:8088/healthz || { echo "the service did not start: $(tail -3 "$tmp/sluice.out")" >&2; exit 1; }
source "$root/bench/server/jit.sh"
warm_until_quiet "$pid" wrk -t1 -c64 -d3s -s "$root/bench/server/$lua" http://127.0.0.1:8088/v1/check
http_warm="$warmed"
http=$(wrk -t1 -c64 -d5s --latency -s "$root/bench/server/$lua" http://127.0.0.1:8088/v1/check)
# one ShouldRateLimit call, gRPC-framed: domain "bench", descriptor user=u1 (and ip, org with DESCRIPTORS=3)
java -cp "$jar" "$root/bench/server/RlsFrame.java" "$descriptors" "$tmp/rls.bin"
rls=http://127.0.0.1:8089/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit
if ! curl -s --http2-prior-knowledge -D - -o /dev/null -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$tmp/rls.bin" "$rls" | grep -q 'grpc-status: 0'; then
  echo "gRPC call did not answer grpc-status 0" >&2; exit 1
fi
warm_until_quiet "$pid" h2load -D 3 -c 1 -m 64 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' -d "$tmp/rls.bin" "$rls"
grpc_warm="$warmed"
grpc=$(h2load -D 5 -c 1 -m 64 -t 1 --log-file="$tmp/h2.log" -H 'content-type: application/grpc' -H 'te: trailers' \
  -d "$tmp/rls.bin" "$rls" 2>&1 | grep "finished in" | sed 's/.*s, \([0-9.]*\) req.*/\1/')
gp99=$(cut -f3 "$tmp/h2.log" | sort -n | awk '{a[NR]=$1} END {printf "%.2f ms", a[int(NR*0.99)]/1000}')
echo "$label descriptors=$descriptors load=$(cut -d' ' -f1 /proc/loadavg) http=$(echo "$http" | awk '/Requests\/sec/ {print $2}') req/s" \
  "(p99 $(echo "$http" | awk '$1 == "99%" {print $2}'), non-2xx $(echo "$http" | awk '/Non-2xx/ {n=$NF} END {print n+0}'))" \
  "grpc1=$grpc calls/s (p99 $gp99) warm-up compilations http=$http_warm grpc=$grpc_warm"
