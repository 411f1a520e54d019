#!/usr/bin/env bash
# Builds and runs the example gateway on 127.0.0.1:${PORT:-8092}, with its demo backend on
# 127.0.0.1:${EXAMPLE_BACKEND_PORT:-8093} (beside `sluice serve`'s 8080 and 8081). Extra arguments go to Spring Boot, e.g.
#   examples/spring-cloud-gateway/run.sh --sluice.store=redis://127.0.0.1:6379
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
./mvnw -B -ntp -q -pl examples/spring-cloud-gateway -am package -DskipTests
exec java -jar examples/spring-cloud-gateway/target/sluice-example-spring-cloud-gateway-0.1.0-SNAPSHOT.jar "$@"
