"""How long ``import ember`` takes, in CPU time and wall clock, beside ``import numpy`` (which ember needs).

Each sample is a fresh ``python -c "import ember"`` (or ``"import numpy"``) process; the two alternate (the order
flips every round) so that a loaded machine weighs on both alike. CPU time (user + sys of the child, from
``os.wait4``) is the fair figure on a shared machine: wall clock also counts the time other work held the CPU.
The whole process is timed, interpreter start included, as a user sees it: with its compiled bytecode cached, as
an installed package has it (the children write theirs under a temporary ``PYTHONPYCACHEPREFIX``, never into the
tree, after one untimed warm-up import each), whatever ``PYTHONDONTWRITEBYTECODE`` says here.

    .venv-test/bin/python bench/import_time.py [--rounds 15] [--modules ember numpy]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cached_bytecode_env(env: dict, cache: str) -> dict:
    """``env`` for children that import as an installed package imports: from bytecode they write under the
    temporary prefix ``cache`` (never into the tree), whatever ``PYTHONDONTWRITEBYTECODE`` says in ``env``."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"PYTHONPYCACHEPREFIX": cache}


def sample(module: str, env: dict) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fresh process that imports ``module``."""
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", f"import {module}"], cwd=HERE, env=env)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        sys.exit(f"python -c 'import {module}' failed (exit status {child.returncode})")
    return usage.ru_utime + usage.ru_stime, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--modules", nargs="+", default=["ember", "numpy"])
    args = parser.parse_args()
    cpu: dict[str, list[float]] = {m: [] for m in args.modules}
    wall: dict[str, list[float]] = {m: [] for m in args.modules}
    with tempfile.TemporaryDirectory() as cache:
        env = cached_bytecode_env(dict(os.environ), cache)
        for module in args.modules:
            sample(module, env)  # compiles and caches the bytecode
        for r in range(args.rounds):
            for module in args.modules if r % 2 == 0 else reversed(args.modules):
                c, w = sample(module, env)
                cpu[module].append(c)
                wall[module].append(w)
    print(f"{'median of ' + str(args.rounds):<22}{'CPU (s)':>10}{'wall (s)':>10}   CPU range")
    for module in args.modules:
        print(f"{'import ' + module:<22}{statistics.median(cpu[module]):>10.3f}{statistics.median(wall[module]):>10.3f}"
              f"   {min(cpu[module]):.3f}-{max(cpu[module]):.3f}")


if __name__ == "__main__":
    main()
