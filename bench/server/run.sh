#!/usr/bin/env bash
# Service benchmark, one run, same machine: `sluice serve` (in-memory store) vs nginx limit_req answering 204,
# both under `wrk -t1 -c64 --latency`, then gRPC ShouldRateLimit with GrpcLoad.java at the same concurrency.
# Needs: JDK 17, wrk and nginx (Debian: apt-get install wrk nginx-light). Usage: bench/server/run.sh [seconds]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-10}"
conns="${CONNS:-64}"
jar="$(ls -t "$root"/server/target/sluice-server-*-all.jar 2>/dev/null | head -n 1 || true)"
if [[ -z "$jar" ]]; then (cd "$root" && ./mvnw -B -q -DskipTests package -pl server -am); jar="$(ls -t "$root"/server/target/sluice-server-*-all.jar | head -n 1)"; fi
tmp="$(mktemp -d)"
sluice_pid=""; nginx_started=""
cleanup() {
  [[ -n "$sluice_pid" ]] && kill "$sluice_pid" 2>/dev/null && wait "$sluice_pid" 2>/dev/null || true
  [[ -n "$nginx_started" ]] && nginx -p "$tmp" -c "$tmp/nginx.conf" -s stop 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

java ${SLUICE_JAVA_OPTS:-} -jar "$jar" serve --config "$root/bench/server/bench-rules.yaml" \
  --http 127.0.0.1:8088 --grpc 127.0.0.1:8089 >"$tmp/sluice.out" 2>"$tmp/sluice.err" &
sluice_pid=$!
cp "$root/bench/server/nginx.conf" "$tmp/nginx.conf"
nginx -p "$tmp" -c "$tmp/nginx.conf" && nginx_started=1
for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:8088/healthz && break; sleep 0.1; done

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo "== warm-up (JIT): sluice ${secs}s"
wrk -t1 -c"$conns" -d"${secs}s" -s "$root/bench/server/post.lua" http://127.0.0.1:8088/v1/check >/dev/null
echo "== nginx limit_req -> 204: wrk -t1 -c$conns -d${secs}s --latency"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$root/bench/server/post.lua" http://127.0.0.1:8090/v1/check
echo "== sluice POST /v1/check (memory): wrk -t1 -c$conns -d${secs}s --latency"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$root/bench/server/post.lua" http://127.0.0.1:8088/v1/check
echo "== sluice gRPC ShouldRateLimit (memory), $conns calls in flight, 1 connection (as one Envoy), then 4"
java -cp "$jar" "$root/bench/server/GrpcLoad.java" 127.0.0.1:8089 "$conns" "$secs" "$secs" 1
java -cp "$jar" "$root/bench/server/GrpcLoad.java" 127.0.0.1:8089 "$conns" "$secs" 5 4
