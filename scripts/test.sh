#!/usr/bin/env bash
# Run ember's whole test suite (ruff first, then pytest) in its own virtual environment, .venv-test.
# The first run creates .venv-test and installs ember with the `test` extra, PyTorch's CPU build among it
# as the oracle every test compares against (a few minutes); later runs start at once.
# Extra arguments go to pytest, e.g.  bash scripts/test.sh tests/test_optim.py -x
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv .venv-test test
_say "ruff check ember tests bench examples"
ruff check ember tests bench examples
_say "python -m pytest $*"
rc=0
python -m pytest "$@" || rc=$?
if [ "$rc" -eq 5 ]; then
    _say "error: pytest collected no tests (exit status 5)" >&2
fi
exit "$rc"
