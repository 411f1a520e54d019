#!/usr/bin/env bash
# Service benchmark, one run, same machine: `sluice serve` vs nginx limit_req answering 204, both under
# `wrk -t1 -c64 --latency`, then gRPC ShouldRateLimit under h2load (nghttp2's native HTTP/2 load generator, the
# counterpart of wrk) at the same concurrency: 64 calls in flight on one connection (as one Envoy sends them), then
# on 4 connections. GRPC_JAVA=1 adds the grpc-java client GrpcLoad.java (it needs a core of its own).
# Needs: JDK 17, wrk, nginx, h2load (Debian: apt-get install wrk nginx-light nghttp2-client).
# Usage: [STORE=redis://127.0.0.1:6379|postgresql://…] [HTTP_TRANSPORT=auto|io_uring|epoll|nio] bench/server/run.sh [seconds]
#        (STORE: the service's --store; HTTP_TRANSPORT: its --http-transport)
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

store="${STORE:-memory}"
# one HTTP event loop, as nginx.conf has one worker: the same share of this machine for both (HTTP_THREADS=0 gives
# the service's default, one loop per core)
java ${SLUICE_JAVA_OPTS:-} -jar "$jar" serve --config "$root/bench/server/bench-rules.yaml" --store "$store" \
  --http 127.0.0.1:8088 --grpc 127.0.0.1:8089 --http-threads "${HTTP_THREADS:-1}" \
  --http-transport "${HTTP_TRANSPORT:-auto}" >"$tmp/sluice.out" 2>"$tmp/sluice.err" &
sluice_pid=$!
cp "$root/bench/server/nginx.conf" "$tmp/nginx.conf"
nginx -p "$tmp" -c "$tmp/nginx.conf" && nginx_started=1
for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:8088/healthz && break; sleep 0.1; done

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
# Warm-up until the JIT is quiet: with both cores busy (wrk and the event loop) the compiler threads get little CPU,
# and one round of ${secs}s left ~1,400 compilations queued into the next 8 s (the measured window's p99 then 1.8–2.5 ms,
# the windows after it 1.35–1.45 ms). Rounds of ${secs}s until one compiles fewer than 100 methods (jit.sh: jstat, at
# most 5).
source "$root/bench/server/jit.sh"
warm_until_quiet "$sluice_pid" wrk -t1 -c"$conns" -d"${secs}s" -s "$root/bench/server/post.lua" \
  http://127.0.0.1:8088/v1/check
echo "== warm-up (JIT): rounds of ${secs}s until one compiles fewer than 100 methods: $warmed"
echo "== nginx limit_req -> 204: wrk -t1 -c$conns -d${secs}s --latency"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$root/bench/server/post.lua" http://127.0.0.1:8090/v1/check
echo "== sluice POST /v1/check ($store): wrk -t1 -c$conns -d${secs}s --latency"
before="$(compiled "$sluice_pid")"
wrk -t1 -c"$conns" -d"${secs}s" --latency -s "$root/bench/server/post.lua" http://127.0.0.1:8088/v1/check
after="$(compiled "$sluice_pid")"
[[ -n "$before" && -n "$after" ]] && echo "(methods compiled during this run: $((after - before)))"
# one ShouldRateLimit call, gRPC-framed: domain "bench", descriptor user=u1 (protobuf bytes written out by hand)
printf '\x00\x00\x00\x00\x15\x0a\x05bench\x12\x0c\x0a\x0a\x0a\x04user\x12\x02u1' > "$tmp/rls.bin"
rls=http://127.0.0.1:8089/envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit
if ! curl -s --http2-prior-knowledge -D - -o /dev/null -H 'content-type: application/grpc' -H 'te: trailers' \
    --data-binary @"$tmp/rls.bin" "$rls" | grep -q 'grpc-status: 0'; then
  echo "gRPC call did not answer grpc-status 0; is the service up?" >&2; exit 1
fi
grpc_h2load() { # connections, calls in flight per connection
  rm -f "$tmp/h2.log"
  h2load -D "$secs" -c "$1" -m "$2" -t 1 --log-file="$tmp/h2.log" -H 'content-type: application/grpc' \
    -H 'te: trailers' -d "$tmp/rls.bin" "$rls" | grep -E 'finished in|requests:|status codes'
  cut -f3 "$tmp/h2.log" | sort -n | awk '{a[NR]=$1} END {printf "latency (us): p50 %d, p99 %d, p99.9 %d, max %d (%d calls)\n", a[int(NR*0.5)], a[int(NR*0.99)], a[int(NR*0.999)], a[NR], NR}'
}
echo "== sluice gRPC ShouldRateLimit ($store): warm-up, then h2load -c1 -m$conns -D${secs}s (1 connection)"
h2load -D "$secs" -c 1 -m "$conns" -t 1 -H 'content-type: application/grpc' -H 'te: trailers' -d "$tmp/rls.bin" "$rls" >/dev/null
grpc_h2load 1 "$conns"
echo "== sluice gRPC ShouldRateLimit ($store): h2load -c4 -m$((conns / 4)) -D${secs}s (4 connections)"
grpc_h2load 4 $((conns / 4))
if [[ -n "${GRPC_JAVA:-}" ]]; then
  echo "== the same with the grpc-java client (GrpcLoad.java), 1 connection then 4"
  java -cp "$jar" "$root/bench/server/GrpcLoad.java" 127.0.0.1:8089 "$conns" "$secs" "$secs" 1
  java -cp "$jar" "$root/bench/server/GrpcLoad.java" 127.0.0.1:8089 "$conns" "$secs" 5 4
fi
