#!/usr/bin/env bash
# Run ember's whole test suite in its own virtual environment (.venv-test).
# PyTorch 2.13.0 (CPU) is installed there as the test oracle.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv .venv-test test
ruff check ember tests bench examples
python -m pytest "$@"
