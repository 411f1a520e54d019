#!/usr/bin/env bash
# The servlet filter's cost: the example app (examples/spring-boot-api) twice, side by side, one with
# sluice.enabled=false (no filter at all) and one with the filter on the in-memory store and limits nobody reaches
# (bench/servlet/application-bench.yml), under the same wrk load, alternating, in the same run. Two scenarios:
# anonymous GET /api/greeting (one rule: per-ip) and with a bearer token (two rules, taken all or nothing).
# Reports req/s and the CPU time each app's JVM spent per request (less disturbed by a busy machine).
# Needs: JDK 17, wrk, curl, Linux /proc. Usage: bench/servlet/run.sh [seconds per measurement] [rounds]
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

# one wrk run: prints "req/s cpu-µs-per-request", the CPU time the app's JVM spent (user + system, from /proc)
# divided by the requests it answered; CPU per request is what the filter adds, and it is far less disturbed
# than req/s when other work shares the machine
measure() {
  local pid="$1"; shift
  local before after out
  before="$(awk '{print $14 + $15}' "/proc/$pid/stat")"
  out="$(wrk -t1 -c"$conns" -d"${secs}s" "$@")"
  after="$(awk '{print $14 + $15}' "/proc/$pid/stat")"
  local reqs rps
  reqs="$(echo "$out" | awk '/requests in/ {print $1}')"
  rps="$(echo "$out" | awk '/Requests\/sec/ {print $2}')"
  awk -v r="$rps" -v n="$reqs" -v t="$((after - before))" -v hz="$(getconf CLK_TCK)" \
    'BEGIN {printf "%s %.1f\n", r, t / hz * 1e6 / n}'
}
echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) before the run"
warmups="${WARMUP:-3}"
echo "== warm-up (JIT): $warmups × ${secs}s per app and scenario"
for pid_port in "${pids[0]}:$off_port" "${pids[1]}:$on_port"; do
  pid="${pid_port%%:*}"; port="${pid_port##*:}"
  for _ in $(seq 1 "$warmups"); do
    measure "$pid" "http://127.0.0.1:$port/api/greeting" >/dev/null
    measure "$pid" -H 'Authorization: Bearer bob-token' "http://127.0.0.1:$port/api/greeting" >/dev/null
  done
done
echo "== wrk -t1 -c$conns -d${secs}s, $rounds rounds, the order of the two apps alternating; req/s and CPU µs per request"
printf '%-10s %-6s %10s %10s %7s %12s %12s %7s\n' scenario round 'off req/s' 'on req/s' ratio 'off cpu µs' 'on cpu µs' ratio
for scenario in anonymous token; do
  hdr=(); [[ "$scenario" == token ]] && hdr=(-H 'Authorization: Bearer bob-token')
  for r in $(seq 1 "$rounds"); do
    if (( r % 2 )); then
      off="$(measure "${pids[0]}" "${hdr[@]}" "http://127.0.0.1:$off_port/api/greeting")"
      on="$(measure "${pids[1]}" "${hdr[@]}" "http://127.0.0.1:$on_port/api/greeting")"
    else
      on="$(measure "${pids[1]}" "${hdr[@]}" "http://127.0.0.1:$on_port/api/greeting")"
      off="$(measure "${pids[0]}" "${hdr[@]}" "http://127.0.0.1:$off_port/api/greeting")"
    fi
    read -r off_rps off_cpu <<<"$off"; read -r on_rps on_cpu <<<"$on"
    printf '%-10s %-6s %10s %10s %7s %12s %12s %7s\n' "$scenario" "$r" "$off_rps" "$on_rps" \
      "$(awk -v a="$on_rps" -v b="$off_rps" 'BEGIN {printf "%.3f", a / b}')" "$off_cpu" "$on_cpu" \
      "$(awk -v a="$on_cpu" -v b="$off_cpu" 'BEGIN {printf "%.3f", a / b}')"
  done
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
