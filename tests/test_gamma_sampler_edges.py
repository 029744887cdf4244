"""The gamma sampler (under Gamma, Beta, Dirichlet, Chi2, StudentT) on concentrations outside its support, with
argument validation off: PyTorch's CPU sampler follows C's IEEE arithmetic there (a NaN concentration leaves its
rejection loop with a NaN draw, a negative one boosts by an infinite or NaN scale) and clamps each draw to the
type's smallest normal number, so NaN, negative, zero and infinite concentrations give finite, reproducible numbers
and the generator moves on as many values as PyTorch's. Each draw runs in a subprocess with a time limit: a sampler
that loops forever fails the test instead of hanging the suite."""

import json
import os
import subprocess
import sys

import pytest
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

NAN, INF = float("nan"), float("inf")
EDGE_CONCENTRATIONS = [NAN, -0.5, -2.0, -0.9, -1e-3, -1e-6, 0.0, INF, -INF, 0.3, 2.0]

# Each draw runs after ``manual_seed(0)``; two uniforms drawn after it give the generator's position.
PROGRAMS = {
    "gamma": lambda lib, c, dt: lib.distributions.Gamma(lib.tensor(c, dtype=dt), lib.ones((), dtype=dt)).sample((2,)),
    "beta": lambda lib, c, dt: lib.distributions.Beta(lib.tensor(c, dtype=dt), lib.tensor(c[::-1], dtype=dt)).sample(),
    "dirichlet": lambda lib, c, dt: lib.distributions.Dirichlet(lib.tensor([c, [1.0] * len(c)], dtype=dt).T).sample(),
    "chi2": lambda lib, c, dt: lib.distributions.Chi2(lib.tensor(c, dtype=dt)).sample(),
    "student_t": lambda lib, c, dt: lib.distributions.StudentT(lib.tensor(c, dtype=dt)).sample(),
}


def draw_all(lib, dtype_name):
    """Every program's draws (their reprs: NaN compares equal) and the generator's position after each."""
    dtype = getattr(lib, dtype_name)
    default = lib.distributions.Distribution._validate_args
    lib.distributions.Distribution.set_default_validate_args(False)
    try:
        results = {}
        for name, program in PROGRAMS.items():
            lib.manual_seed(0)
            drawn = program(lib, EDGE_CONCENTRATIONS, dtype)
            after = lib.rand(2, dtype=dtype)
            results[name] = [[repr(v) for v in drawn.reshape(-1).tolist()], after.tolist()]
        return results
    finally:
        lib.distributions.Distribution.set_default_validate_args(default)


SUBPROCESS = """
import json, sys
sys.path.insert(0, {tests!r})
import ember
from test_gamma_sampler_edges import draw_all
print(json.dumps(draw_all(ember, sys.argv[1])))
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_edge_concentrations_draw_as_pytorch(dtype):
    # ember's draws in a subprocess with a time limit: a sampler that loops forever fails instead of hanging
    source = SUBPROCESS.format(tests=os.path.join(ROOT, "tests"))
    try:
        proc = subprocess.run([sys.executable, "-c", source, dtype], capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": ROOT}, cwd=ROOT)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the draws with concentrations {EDGE_CONCENTRATIONS} did not finish (the sampler looped)")
    assert proc.returncode == 0, proc.stderr[-2000:]
    got, want = json.loads(proc.stdout), draw_all(torch, dtype)
    for name in PROGRAMS:
        assert got[name] == want[name], name


def test_nan_draw_is_the_smallest_normal_number_in_process():
    # In this process as well: a negative concentration's NaN draw (a NaN sqrt) clamps to finfo.tiny as PyTorch's
    # std::max(min, draw) does, where NumPy's maximum would keep the NaN.
    import ember

    for lib in (ember, torch):
        lib.manual_seed(0)
    values = [-2.0, 1.5, -INF]
    got = ember.distributions.Gamma(ember.tensor(values), ember.tensor(1.0), validate_args=False).sample()
    want = torch.distributions.Gamma(torch.tensor(values), torch.tensor(1.0), validate_args=False).sample()
    assert got.tolist() == want.tolist()
    assert got[0].item() == torch.finfo(torch.float32).tiny
