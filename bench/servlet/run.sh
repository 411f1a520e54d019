#!/usr/bin/env bash
# The servlet filter's cost: the example app (examples/spring-boot-api) twice, side by side, one with
# sluice.enabled=false (no filter at all) and one with the filter on the in-memory store and limits nobody reaches
# (bench/servlet/application-bench.yml), under the same wrk load, alternating, in the same run. Two scenarios:
# anonymous GET /api/greeting (one rule: per-ip) and with a bearer token (two rules, taken all or nothing).
# Needs: JDK 17, wrk, curl. Usage: bench/servlet/run.sh [seconds per measurement] [rounds]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
secs="${1:-10}"
rounds="${2:-3}"
conns="${CONNS:-32}"
jar="$root/examples/spring-boot-api/target/sluice-example-spring-boot-api-0.1.0-SNAPSHOT.jar"
if [[ ! -f "$jar" || -n "${REBUILD:-}" ]]; then
  (cd "$root" && ./mvnw -B -ntp -q -pl examples/spring-boot-api -am package -DskipTests)
fi
opts="${JAVA_OPTS:--Xmx256m -XX:+UseParallelGC}"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
off_port="$(free_port)"; on_port="$(free_port)"
tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

PORT="$off_port" java $opts -jar "$jar" --sluice.enabled=false >"$tmp/off.log" 2>&1 &
pids+=($!)
PORT="$on_port" java $opts -jar "$jar" --spring.config.additional-location="file:$root/bench/servlet/application-bench.yml" \
  >"$tmp/on.log" 2>&1 &
pids+=($!)
for port in "$off_port" "$on_port"; do
  for _ in $(seq 1 600); do curl -s -o /dev/null "http://127.0.0.1:$port/api/greeting" && break; sleep 0.2; done
done
# the filter really is there (and only there)
curl -s -D - -o /dev/null "http://127.0.0.1:$on_port/api/greeting" | grep -qi '^RateLimit:' \
  || { echo "the filtered app sends no RateLimit header"; exit 1; }
if curl -s -D - -o /dev/null "http://127.0.0.1:$off_port/api/greeting" | grep -qi '^RateLimit:'; then
  echo "the unfiltered app sends a RateLimit header"; exit 1
fi

rps() { wrk -t1 -c"$conns" -d"${secs}s" "$@" | awk '/Requests\/sec/ {print $2}'; }
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
echo "== warm-up (JIT), ${secs}s each"
for port in "$off_port" "$on_port"; do
  rps "http://127.0.0.1:$port/api/greeting" >/dev/null
  rps -H 'Authorization: Bearer bob-token' "http://127.0.0.1:$port/api/greeting" >/dev/null
done
echo "== wrk -t1 -c$conns -d${secs}s, $rounds rounds alternating; req/s"
printf '%-10s %-7s %12s %12s %8s\n' scenario round no-filter filter ratio
for scenario in anonymous token; do
  hdr=(); [[ "$scenario" == token ]] && hdr=(-H 'Authorization: Bearer bob-token')
  for r in $(seq 1 "$rounds"); do
    off="$(rps "${hdr[@]}" "http://127.0.0.1:$off_port/api/greeting")"
    on="$(rps "${hdr[@]}" "http://127.0.0.1:$on_port/api/greeting")"
    printf '%-10s %-7s %12s %12s %8s\n' "$scenario" "$r" "$off" "$on" "$(awk -v a="$on" -v b="$off" 'BEGIN {printf "%.3f", a / b}')"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
