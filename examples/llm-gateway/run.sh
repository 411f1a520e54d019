#!/usr/bin/env bash
# Builds and runs the example LLM gateway on 127.0.0.1:${PORT:-8091}. Extra arguments go to Spring Boot, e.g.
#   examples/llm-gateway/run.sh --sluice.rules[0].requests_per_unit=5000
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
./mvnw -B -ntp -q -pl examples/llm-gateway -am package -DskipTests
exec java -jar examples/llm-gateway/target/sluice-example-llm-gateway-0.1.0-SNAPSHOT.jar "$@"
