# Sourced by run.sh and store.sh: how many methods a JVM's JIT has compiled, and a warm-up until it is quiet.

# compiled <pid>: the JVM's compilations so far (jstat -compiler), empty without jstat
compiled() { jstat -compiler "$1" 2>/dev/null | awk 'NR == 2 { print $1 }'; }

# warm_until_quiet <pid> <command...>: runs the command (a load) in rounds until one compiles fewer than 100 methods,
# at most 5 rounds; sets $warmed to each round's compilations, e.g. "2541,326,208,68" (one round without jstat)
warm_until_quiet() {
  local pid="$1" rounds="" before after
  shift
  for _ in 1 2 3 4 5; do
    before="$(compiled "$pid")"; "$@" >/dev/null 2>&1; after="$(compiled "$pid")"
    if [[ -z "$before" || -z "$after" ]]; then warmed="one round, no jstat"; return; fi
    rounds="${rounds:+$rounds,}$((after - before))"
    (( after - before < 100 )) && break
  done
  warmed="$rounds"
}
