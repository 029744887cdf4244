"""ember under numba's ``NUMBA_DISABLE_JIT=1``: it runs, its NumPy kernels in place of the compiled ones (the same
results as with the JIT on, to rounding), and a kernel called directly runs as numba runs it, the loop interpreted.
Each in a fresh process: numba reads the variable once, at its import."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = str(Path(__file__).resolve().parents[1])

SCRIPT = r"""
import json, numpy as np, ember
from ember._kernels import activation
from ember._kernels.policy import policy

ember.manual_seed(0)
model = ember.nn.Sequential(ember.nn.Linear(256, 128), ember.nn.LayerNorm(128), ember.nn.GELU(),
                            ember.nn.Linear(128, 10))
x = ember.randn(128, 256)
target = ember.randint(0, 10, (128,))
opt = ember.optim.AdamW(model.parameters(), lr=1e-2)
loss = ember.nn.functional.cross_entropy(ember.log_softmax(model(x), -1), target)
loss.backward()
grads = [p.grad.sum().item() for p in model.parameters()]
opt.step()
with policy.override(compiled=True):  # (whether the compiled kernels would run: never with the JIT off)
    compiled = policy.use_compiled()
v = np.linspace(-4, 4, 64, dtype=np.float32)
out, d = np.empty_like(v), np.empty_like(v)
activation.leaky_relu(v, np.float32(0.1), np.float32(1), out, d)
print(json.dumps({"loss": loss.item(), "grads": grads, "params": [p.sum().item() for p in model.parameters()],
                  "compiled": compiled, "leaky": out.tolist(), "leaky_d": d.tolist(),
                  "kernel": type(activation.leaky_relu.compiled()).__name__}))
"""


def _run(disable: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": ROOT}
    env.pop("NUMBA_DISABLE_JIT", None)
    if disable:
        env["NUMBA_DISABLE_JIT"] = "1"
    done = subprocess.run([sys.executable, "-W", "error::RuntimeWarning", "-c", SCRIPT], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_training_step_and_kernels_with_numba_jit_disabled():
    off, on = _run(True), _run(False)
    assert off["compiled"] is False and on["compiled"] is True
    assert off["kernel"] == "function"  # numba's njit hands back the Python function: the loop runs interpreted
    assert off["loss"] == pytest.approx(on["loss"], rel=1e-5)
    assert off["grads"] == pytest.approx(on["grads"], rel=1e-4, abs=1e-5)
    assert off["params"] == pytest.approx(on["params"], rel=1e-4, abs=1e-5)
    assert off["leaky"] == on["leaky"] and off["leaky_d"] == on["leaky_d"]
