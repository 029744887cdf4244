#!/usr/bin/env bash
# ember's main job: examples/train_mlp.py, an MLP classifier trained data-parallel on 2 processes over MPI.
# The first run creates .venv-main (ember with mpi4py and MPICH, tqdm and matplotlib); later runs start at once.
# Extra arguments go to examples/train_mlp.py (e.g. --epochs 3); NPROC=4 changes the number of processes.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh
ensure_venv .venv-main distributed,progress,plot
# The processes' output reaches this terminal through MPI's pipes, so train_mlp.py cannot see the terminal
# itself: ask for the progress bar here when there is one (an argument of yours, --progress ..., wins).
progress=lines
[ -t 1 ] && progress=bar
_say "python -m ember.distributed.run --nproc-per-node ${NPROC:-2} examples/train_mlp.py --progress $progress $*"
python -m ember.distributed.run --nproc-per-node "${NPROC:-2}" examples/train_mlp.py --progress "$progress" "$@"
