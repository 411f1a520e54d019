#!/usr/bin/env bash
# Builds and runs the example API on 127.0.0.1:${PORT:-8090} (beside `sluice serve`'s 8080 and 8081). Extra arguments
# go to Spring Boot, e.g.
#   examples/spring-boot-api/run.sh --sluice.shadow-mode=true
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
./mvnw -B -ntp -q -pl examples/spring-boot-api -am package -DskipTests
exec java -jar examples/spring-boot-api/target/sluice-example-spring-boot-api-0.1.0-SNAPSHOT.jar "$@"
