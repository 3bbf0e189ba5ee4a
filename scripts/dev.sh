#!/usr/bin/env bash
# The two commands of the README:
#   scripts/dev.sh demo   set up, then run the saxpy sample (AMD GPU if present, else the cpu target)
#   scripts/dev.sh test   set up, then run the whole test suite
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
case "${1:-}" in
  demo) exec python3 samples/saxpy.py ;;
  # two workers (pytest-xdist), each test file whole on one of them so that its module fixtures are
  # built once; `scripts/dev.sh test -n 0` runs everything in one process
  test) shift; exec python3 -m pytest -q -p no:cacheprovider -n 2 --dist loadfile tests "$@" ;;
  *) echo "usage: scripts/dev.sh demo|test [pytest args]" >&2; exit 2 ;;
esac
