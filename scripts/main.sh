#!/usr/bin/env bash
# ember's main job: the seed MLP trained data-parallel on 2 processes (MPI), rank 0 printing the loss.
# Extra arguments go to examples/train_mlp.py (e.g. --epochs 3).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv .venv-main distributed
python -m ember.distributed.run --nproc-per-node "${NPROC:-2}" examples/train_mlp.py "$@"
