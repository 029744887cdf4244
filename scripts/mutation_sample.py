"""Mutation sampling: how many one-line mutations of ember's core does the test suite catch?

    .venv-test/bin/python scripts/mutation_sample.py --sample 100 --seed 0 [--only optim]

Each mutant changes one expression on one line of a core module (an arithmetic or comparison operator swapped,
a constant changed, a boolean flipped, a ``not`` dropped, a ``min``/``max`` swapped) — the kind of slip that
leaves code running and results wrong. For each sampled mutant the script writes the mutated file into a
scratch copy of the repository (a ``git worktree`` of HEAD, so the checkout is never touched), runs the tests
that cover that module (``TARGETS``) with ``-x`` and a time limit, and counts the mutant *caught* when they
fail or time out and *survived* when they pass. It prints each survivor (file, line, before and after) and the
share caught; ``--json`` writes the same as JSON.

The sample is drawn reproducibly (``--seed``) from every candidate expression of the target modules, weighted
equally per candidate. Equivalent mutants (a change that cannot alter behaviour) count as survivors: read the
list. A mutant whose file no longer compiles is skipped and not counted.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the optimizers' tests: options and errors, and the fast update against the reference and PyTorch
_OPTIM_TESTS = ["tests/test_optim.py", "tests/test_optim_more.py",
                "tests/test_fast_paths.py::test_fast_step_matches_reference",
                "tests/test_fast_paths.py::test_fast_and_reference_steps_match_torch"]

# module (relative to the repository) -> the test files (or pytest node ids) that cover it
TARGETS = {
    "ember/autograd/engine.py": ["tests/test_autograd.py"],
    "ember/autograd/graph.py": ["tests/test_autograd.py", "tests/test_sparse_grads.py"],
    "ember/autograd/grad_store.py": ["tests/test_grad_store.py", "tests/test_autograd.py", "tests/test_fast_paths.py"],
    "ember/autograd/recorded.py": ["tests/test_higher_order.py", "tests/test_higher_order_tensor.py",
                                   "tests/test_higher_order_nn.py", "tests/test_higher_order_conv.py"],
    "ember/autograd/functional.py": ["tests/test_autograd_functional.py", "tests/test_func_transforms.py"],
    "ember/func/_transforms.py": ["tests/test_func_transforms.py", "tests/test_autograd_functional.py"],
    "ember/ops/elementwise.py": ["tests/test_ops_elementwise.py", "tests/test_complex.py"],
    "ember/ops/unary.py": ["tests/test_ops_elementwise.py", "tests/test_ops_pointwise.py", "tests/test_complex.py"],
    "ember/ops/reduction.py": ["tests/test_ops_reduction.py"],
    "ember/ops/linalg.py": ["tests/test_ops_matrix_sort.py", "tests/test_ops_more.py"],
    "ember/nn/_ops/loss.py": ["tests/test_nn_losses.py"],
    "ember/nn/_ops/classification.py": ["tests/test_nn_losses.py"],
    "ember/nn/_ops/norm.py": ["tests/test_nn_layers.py", "tests/test_nn_instance_norm.py"],
    "ember/nn/_ops/activation.py": ["tests/test_nn_layers.py"],
    "ember/optim/sgd.py": [*_OPTIM_TESTS, "tests/test_sparse_grads.py"],
    "ember/optim/adam.py": [*_OPTIM_TESTS, "tests/test_optim_amsgrad.py"],
    "ember/optim/optimizer.py": [*_OPTIM_TESTS, "tests/test_sparse_grads.py", "tests/test_step_hooks.py",
                                 "tests/test_grad_store.py"],
    "ember/optim/_helpers.py": _OPTIM_TESTS,
    "ember/optim/rmsprop.py": _OPTIM_TESTS,
    "ember/optim/adagrad.py": [*_OPTIM_TESTS, "tests/test_sparse_grads.py"],
    "ember/optim/adadelta.py": _OPTIM_TESTS,
    "ember/optim/adamax.py": _OPTIM_TESTS,
    "ember/optim/nadam.py": _OPTIM_TESTS,
    "ember/optim/radam.py": _OPTIM_TESTS,
    "ember/utils/data/sampler.py": ["tests/test_data_samplers.py", "tests/test_data.py"],
    "ember/utils/data/distributed.py": ["tests/test_distributed_sampler.py"],
    "ember/serialization/_torch_unpickle.py": ["tests/test_serialization_interop.py",
                                               "tests/test_serialization_hostile.py"],
    "ember/serialization/_ember_format.py": ["tests/test_serialization.py"],
    "ember/distributed/reducer.py": ["tests/test_reducer_interface.py", "tests/test_ddp.py"],
    "ember/distributed/lockstep.py": ["tests/test_lockstep.py"],
}

_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult,
          ast.Pow: ast.Mult, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
          ast.NotEq: ast.Eq, ast.And: ast.Or, ast.Or: ast.And, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


def _docstring_lines(tree: ast.AST) -> set[int]:
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                lines.update(range(first.lineno, first.end_lineno + 1))
    return lines


def _mutations(node: ast.AST):
    """(description, mutated copy of ``node``) for each one-expression change of ``node`` itself."""
    import copy

    if isinstance(node, ast.BinOp) and type(node.op) in _SWAPS:
        m = copy.deepcopy(node)
        m.op = _SWAPS[type(node.op)]()
        yield m
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _SWAPS:
        m = copy.deepcopy(node)
        m.ops = [_SWAPS[type(node.ops[0])]()]
        yield m
    elif isinstance(node, ast.BoolOp) and type(node.op) in _SWAPS:
        m = copy.deepcopy(node)
        m.op = _SWAPS[type(node.op)]()
        yield m
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
        yield copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and not isinstance(node.value, bool):
        yield ast.Constant(node.value + 1 if node.value in (0, 1) or isinstance(node.value, int) else node.value * 2)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield ast.Constant(not node.value)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max"):
        m = copy.deepcopy(node)
        m.func = ast.Name("max" if node.func.id == "min" else "min")
        yield m


def candidates(path: str, root: str = ROOT) -> list[dict]:
    """Every single-line mutant of ``path``: {file, line, col, end, before, after}."""
    source = Path(root, path).read_text(encoding="utf-8")
    tree = ast.parse(source)
    skip = _docstring_lines(tree)
    lines = source.splitlines()
    out = []
    for node in ast.walk(tree):
        if not hasattr(node, "lineno") or node.lineno != getattr(node, "end_lineno", None) or node.lineno in skip:
            continue
        text = lines[node.lineno - 1]
        if text.lstrip().startswith(("def ", "class ", "@", "import ", "from ")):
            continue
        for mutated in _mutations(node):
            before = text[node.col_offset:node.end_col_offset]
            after = ast.unparse(mutated)
            if after != before:
                out.append({"file": path, "line": node.lineno, "col": node.col_offset, "end": node.end_col_offset,
                            "before": before, "after": after})
    return out


def _apply(scratch: str, mutant: dict) -> str | None:
    """Write the mutant into ``scratch``; the original text (to restore), or None when it does not compile."""
    path = os.path.join(scratch, mutant["file"])
    original = Path(path).read_text(encoding="utf-8")
    lines = original.splitlines(keepends=True)
    i = mutant["line"] - 1
    line = lines[i]
    lines[i] = line[:mutant["col"]] + mutant["after"] + line[mutant["end"]:]
    mutated = "".join(lines)
    try:
        compile(mutated, path, "exec")
    except SyntaxError:
        return None
    with open(path, "w", encoding="utf-8") as f:
        f.write(mutated)
    return original


def run_tests(scratch: str, tests: list[str], timeout: float) -> str:
    """'caught', 'survived' or 'timeout' for the mutant now in ``scratch``."""
    env = dict(os.environ, PYTHONPATH=scratch, PYTHONDONTWRITEBYTECODE="1")
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:warnings", *tests]
    try:
        out = subprocess.run(cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "survived" if out.returncode == 0 else "caught"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, default=100, help="mutants to run (default 100)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the sample's first N mutants (to split one sample over several runs)")
    parser.add_argument("--only", default="", help="only modules whose path contains this text")
    parser.add_argument("--timeout", type=float, default=300, help="seconds per mutant's tests (timeout = caught)")
    parser.add_argument("--json", default="", help="write the results here too")
    args = parser.parse_args(argv)

    pool = [c for path in TARGETS if args.only in path and os.path.exists(os.path.join(ROOT, path))
            for c in candidates(path)]
    random.Random(args.seed).shuffle(pool)
    scratch_root = tempfile.mkdtemp(prefix="ember-mutants-")
    scratch = os.path.join(scratch_root, "ember")
    subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", "-q", scratch, "HEAD"], check=True)
    results, skipped, started = [], 0, time.monotonic()
    try:
        for mutant in pool:
            if len(results) >= args.sample - args.skip:
                break
            original = _apply(scratch, mutant)
            if original is None:
                continue
            if skipped < args.skip:
                skipped += 1
                with open(os.path.join(scratch, mutant["file"]), "w", encoding="utf-8") as f:
                    f.write(original)
                continue
            try:
                mutant["outcome"] = run_tests(scratch, TARGETS[mutant["file"]], args.timeout)
            finally:
                with open(os.path.join(scratch, mutant["file"]), "w", encoding="utf-8") as f:
                    f.write(original)
            results.append(mutant)
            mark = "." if mutant["outcome"] != "survived" else "S"
            print(mark, end="", flush=True)
    finally:
        subprocess.run(["git", "-C", ROOT, "worktree", "remove", "--force", scratch], check=False)
        shutil.rmtree(scratch_root, ignore_errors=True)
    print()
    survivors = [m for m in results if m["outcome"] == "survived"]
    for m in survivors:
        print(f"survived: {m['file']}:{m['line']}: {m['before']!r} -> {m['after']!r}")
    caught = len(results) - len(survivors)
    share = caught / len(results) if results else 0.0
    print(f"{caught} of {len(results)} mutants caught ({share:.1%}) in {time.monotonic() - started:.0f} s "
          f"(seed {args.seed}, {len(pool)} candidates)")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"seed": args.seed, "caught": caught, "total": len(results), "mutants": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
