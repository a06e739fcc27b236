#!/usr/bin/env bash
# The example Prometheus files of deploy/prometheus/: the scrape config
# parses, and the alert rules fire when, and only when, they should
# (promtool test rules over tests/deploy/outbox-alerts.test.yml).
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT/tests/deploy"
promtool check config --syntax-only "$ROOT/deploy/prometheus/prometheus.yml"
promtool check rules "$ROOT/deploy/prometheus/outbox-alerts.yml"
promtool test rules outbox-alerts.test.yml
