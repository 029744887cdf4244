#!/usr/bin/env bash
# Run ember's whole test suite (ruff first, then pytest) in its own virtual environment, .venv-test.
# The first run creates .venv-test and installs ember with the `test` extra, PyTorch's CPU build among it
# as the oracle every test compares against (5 to 15 minutes); later runs start at once.
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
# The whole suite runs on the compiled kernels (ember/_kernels, numba); the test files of the ops that have a
# compiled kernel run once more on the NumPy reference kernels, the fallback when numba is absent (a few
# minutes, not a second suite). Only after a whole-suite run (no arguments).
if [ "$#" -eq 0 ] && [ "$rc" -eq 0 ]; then
    numpy_kernel_tests=(tests/test_kernels.py tests/test_conv_fast.py tests/test_nn_conv_transpose.py
                        tests/test_nn_layers.py tests/test_pool_threads.py tests/test_embedding_grads.py
                        tests/test_fast_kernels.py tests/test_nn_transformer.py tests/test_optim.py)
    _say "EMBER_KERNELS=numpy python -m pytest ${numpy_kernel_tests[*]}"
    EMBER_KERNELS=numpy python -m pytest "${numpy_kernel_tests[@]}" || rc=$?
fi
exit "$rc"
