#!/usr/bin/env bash
# Builds the benchmark jar and runs every Sluice benchmark in one JMH invocation, then the retained-heap
# measurement, and prints the tables of bench/README.md. Extra arguments go to JMH, e.g. a quick look:
#   bench/run.sh -wi 1 -w 1s -i 1 -r 1s
# Outputs (not committed): bench/target/jmh.json, bench/target/jmh.txt, bench/target/heap.txt
set -euo pipefail
cd "$(dirname "$0")/.."

./mvnw -B -q package -pl bench -am -DskipTests
jar=bench/target/benchmarks.jar

echo "== $(date -u +%FT%TZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(java -version 2>&1 | head -1)"
java -jar "$jar" 'dev\.sluice\.bench\.(HotKey|RandomKeys|Breakdown)' -prof gc \
    -rf json -rff bench/target/jmh.json "$@" | tee bench/target/jmh.txt
echo "== load after JMH: $(cut -d' ' -f1-3 /proc/loadavg)"

java -Xms2g -Xmx2g -XX:+UseSerialGC -cp "$jar" dev.sluice.bench.RetainedHeap all 1000000 3 \
    | tee bench/target/heap.txt

java -cp "$jar" dev.sluice.bench.Report bench/target/jmh.json
