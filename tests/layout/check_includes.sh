#!/usr/bin/env bash
# Checks that includes between the project's parts run one way (core/README.md):
# a file may include only its own folder and the folders listed for it.
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
declare -A allowed=(
  [core/base]=""
  [core/json]="core/base"
  [core/domain]="core/base core/json"
  [core/pg]="core/base core/json core/domain"
  [core/amqp]="core/base core/json core/domain"
  [core/config]="core/base core/json core/domain core/pg core/amqp"
  [core/producer]="core/base core/json core/domain core/pg core/amqp core/config"
  [core/testing]="core/base core/json core/domain core/pg core/amqp core/config core/producer"
  [worker]="core/base core/json core/domain core/amqp core/config"
  [cluster_port]="core/base"
  [actors]="core/base core/json core/domain core/pg core/amqp core/config core/producer cluster_port"
)
bad=0
for part in "${!allowed[@]}"; do
  for file in "$ROOT/$part"/*.hpp "$ROOT/$part"/*.cpp; do
    [ -e "$file" ] || continue
    while IFS= read -r inc; do
      dir=${inc%/*}
      [ "$dir" = "$part" ] && continue
      ok=0
      for a in ${allowed[$part]}; do [ "$dir" = "$a" ] && ok=1; done
      if [ $ok = 0 ]; then
        echo "${file#$ROOT/}: includes $inc, which $part may not include"
        bad=1
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  done
done
exit $bad
