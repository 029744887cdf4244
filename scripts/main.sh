#!/usr/bin/env bash
# ember's main job: train the seed MLP and print its loss falling.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv .venv-main ""
python examples/train_mlp.py "$@"
