#!/usr/bin/env bash
# Each supported Python (3.10, 3.12, 3.13 here; 3.11 runs the test suite): a fresh virtual environment, ember
# installed from this checkout with its own dependencies only (NumPy, ml_dtypes, numba and its llvmlite; a regular
# install), a tiny model trained from outside the checkout, and one compiled kernel run (numba loads and compiles).
# A version whose interpreter is not on this machine is skipped with
# the reason printed. Exits non-zero if any version found fails.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Build from a copy of the tracked files, so that no build/ or *.egg-info is left in the checkout.
mkdir "$work/src"
git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$work/src"

# The interpreter for version $1: pythonX.Y on PATH if it runs, else one under pyenv's versions folder.
find_python() {
    local v="$1" candidate
    for candidate in "python$v" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$v".*/bin/"python$v" \
                     "/usr/bin/python$v" "/usr/local/bin/python$v"; do
        if "$candidate" -c 'import sys' >/dev/null 2>&1; then
            printf '%s\n' "$candidate"
            return 0
        fi
    done
    return 1
}

cat > "$work/tiny.py" <<'PY'
import importlib.resources
import sys

import ember
import ember.nn as nn

assert "numba" not in sys.modules, "import ember imported numba"

assert importlib.resources.files("ember").joinpath("py.typed").is_file(), "py.typed is not installed"
ember.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = ember.optim.Adam(model.parameters(), lr=0.01)
x = ember.randn(64, 4)
y = x.sum(dim=1, keepdim=True)
losses = []
for _ in range(100):
    optimizer.zero_grad()
    loss = nn.functional.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss.item())
assert losses[-1] < losses[0] / 10, losses
gelu = ember.nn.functional.gelu(ember.tensor([-3.0, 0.5, 3.0]))  # float32 GELU: a compiled kernel
from ember._kernels import policy
assert policy.use_compiled() and "numba" in sys.modules, "the compiled kernels did not load"
assert max(abs(a - b) for a, b in zip(gelu.tolist(), [-0.0040496, 0.3457312, 2.9959502])) < 1e-6, gelu
print(f"Python {sys.version.split()[0]}: ember from {ember.__file__}, loss {losses[0]:.3f} -> {losses[-1]:.4f}, "
      f"numba {sys.modules['numba'].__version__}")
PY

failed=0
for v in 3.10 3.12 3.13; do
    if ! py="$(find_python "$v")"; then
        echo "[check_pythons] Python $v: skipped, no python$v interpreter on this machine"
        continue
    fi
    echo "[check_pythons] Python $v ($py): fresh venv, pip install ember (NumPy, ml_dtypes, numba only), train a tiny model"
    if "$py" -m venv "$work/venv$v" \
        && "$work/venv$v/bin/python" -m pip install -q "$work/src" \
        && extra="$("$work/venv$v/bin/python" -m pip list --format=freeze | grep -v -i -E '^(ember|numpy|ml[-_]dtypes|numba|llvmlite|pip|setuptools)==' || true)" \
        && { [ -z "$extra" ] || { echo "unexpected packages installed: $extra" >&2; false; }; } \
        && (cd "$work" && "$work/venv$v/bin/python" tiny.py); then
        :
    else
        echo "[check_pythons] Python $v: FAILED" >&2
        failed=1
    fi
done
exit "$failed"
