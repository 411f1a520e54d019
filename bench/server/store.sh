#!/usr/bin/env bash
# One service on a store, the load of run.sh at shorter phases: HTTP (wrk -t1 -c64, 1,000 users in rotation), then
# gRPC ShouldRateLimit (h2load -c1 -m64, one user), 5 s each after 3 s of warm-up. For before/after comparisons of
# the Redis and PostgreSQL service paths: run it for each jar in turn, interleaved, on the same store.
# Usage: bench/server/store.sh <sluice-server-*-all.jar> <store URI> <label>
#   e.g. bench/server/store.sh server/target/sluice-server-0.1.0-SNAPSHOT-all.jar redis://127.0.0.1:6390 after
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
jar="$1"; store="$2"; label="$3"
tmp="$(mktemp -d)"
java -jar "$jar" serve --config "$root/bench/server/bench-rules.yaml" --store "$store" --http 127.0.0.1:8088 \
  --grpc 127.0.0.1:8089 >"$tmp/sluice.out" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:8088/healthz && break; sleep 0.1; done
wrk -t1 -c64 -d3s -s "$root/bench/server/post.lua" http://127.0.0.1:8088/v1/check >/dev/null
http=$(wrk -t1 -c64 -d5s --latency -s "$root/bench/server/post.lua" http://127.0.0.1:8088/v1/check)
# one ShouldRateLimit call, gRPC-framed: domain "bench", descriptor user=u1 (as run.sh)
printf '\x00\x00\x00\x00\x15\x0a\x05bench\x12\x0c\x0a\x0a\x0a\x04user\x12\x02u1' > "$tmp/rls.bin"
rls=http://127.0.0.1:8089/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit
h2load -D 3 -c 1 -m 64 -t 1 -H 'content-type: application/grpc' -H 'te: trailers' -d "$tmp/rls.bin" "$rls" >/dev/null 2>&1
grpc=$(h2load -D 5 -c 1 -m 64 -t 1 --log-file="$tmp/h2.log" -H 'content-type: application/grpc' -H 'te: trailers' \
  -d "$tmp/rls.bin" "$rls" 2>&1 | grep "finished in" | sed 's/.*s, \([0-9.]*\) req.*/\1/')
gp99=$(cut -f3 "$tmp/h2.log" | sort -n | awk '{a[NR]=$1} END {printf "%.2f ms", a[int(NR*0.99)]/1000}')
echo "$label load=$(cut -d' ' -f1 /proc/loadavg) http=$(echo "$http" | awk '/Requests\/sec/ {print $2}') req/s" \
  "(p99 $(echo "$http" | awk '$1 == "99%" {print $2}')) grpc1=$grpc calls/s (p99 $gp99)"
