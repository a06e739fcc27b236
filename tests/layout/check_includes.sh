#!/usr/bin/env bash
# Checks that includes between the project's parts run one way (README's
# layout table, core/README.md): a file may include only its own folder and
# the folders listed for it (a listed pattern such as core/* covers several).
# Every folder that holds C++ must be in the table, so a new folder is
# checked from its first file on.
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
core="core/base core/json core/domain core/pg core/amqp core/config core/producer"
libraries="core/* cluster_port worker actors cli status_view http"
declare -A allowed=(
  # The libraries, from the bottom up.
  [core/base]=""
  [core/json]="core/base"
  [core/domain]="core/base core/json"
  [core/pg]="core/base core/json core/domain"
  [core/amqp]="core/base core/json core/domain"
  [core/config]="core/base core/json core/domain core/pg core/amqp"
  [core/producer]="core/base core/json core/domain core/pg core/amqp core/config"
  [core/testing]="$core"
  [cluster_port]="core/base"
  [worker]="core/base core/json core/domain core/pg core/amqp core/config"
  [actors]="$core cluster_port"
  [cli]="$core actors"
  [status_view]="$core actors"
  [http]="$core cluster_port actors cli status_view"
  # The programs: each its own folder, none includes another's.
  [tools/outboxd]="$core actors cli http"
  [tools/outboxctl]="$core actors cli status_view"
  [tools/example_worker]="$core worker cli"
  [tools/benchmark]="$core worker cli tests/support"
  # Test plumbing includes nothing of ours; the tests include what they test.
  [tests/support]=""
  [tests/corpus]=""
  [tests/fakes]="$core"
  [tests]="$core"
  [tests/unit]="$libraries tools/outboxctl tests tests/*"
  [tests/unit/*]="$libraries tools/outboxctl tests tests/*"
  [tests/integration]="$libraries tests tests/*"
  [tests/faults]="$libraries tests tests/*"
  [tests/deploy/consumer_app]="$core core/testing worker"
)

# The table's entry for a folder: its own, or a pattern that covers it.
entry_of() {
  local dir=$1 key
  [ -n "${allowed[$dir]+x}" ] && { echo "$dir"; return; }
  for key in "${!allowed[@]}"; do
    # shellcheck disable=SC2053 # the key is a pattern on purpose
    [[ $key == *'*'* && $dir == $key ]] && { echo "$key"; return; }
  done
}

bad=0
while IFS= read -r dir; do
  key=$(entry_of "$dir")
  if [ -z "$key" ]; then
    echo "$dir: holds C++ but is not in tests/layout/check_includes.sh's table"
    bad=1
    continue
  fi
  for file in "$ROOT/$dir"/*.hpp "$ROOT/$dir"/*.cpp; do
    [ -e "$file" ] || continue
    while IFS= read -r inc; do
      inc_dir=${inc%/*}
      [ "$inc_dir" = "$dir" ] && continue
      ok=0
      read -ra patterns <<< "${allowed[$key]}" # no glob expansion
      for a in "${patterns[@]}"; do
        # shellcheck disable=SC2053
        [[ $inc_dir == $a ]] && ok=1
      done
      if [ $ok = 0 ]; then
        echo "${file#$ROOT/}: includes $inc, which $dir may not include"
        bad=1
      fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
  done
done < <(cd "$ROOT" && find . \( -path './build*' -o -path './.*' -o -name node_modules \) -prune -o \
           \( -name '*.cpp' -o -name '*.hpp' \) -printf '%h\n' | sed 's#^\./##' | sort -u)
exit $bad
