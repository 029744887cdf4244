"""Which tests execute each line of the mutation targets: the map scripts/mutation_sample.py selects tests from.

    nice -n 15 .venv-test/bin/python scripts/mutation_coverage.py [--chunk 40] [test files ...]

runs the given test files (default: every ``tests/test_*.py``) once under coverage.py, measuring only the
mutation targets (``mutation_sample.TARGETS``' keys), with each test's node id as its coverage context (a
pytest plugin that calls ``Coverage.switch_context`` as each test starts: one call per test, where coverage's own
``dynamic_context = test_function`` inspects every new frame and names a test without its parameters). The files
run in chunks of ``--chunk`` files, one pytest process each, every chunk's data kept as it finishes
(``.mutation-coverage/<commit>/chunk-N``), so an interrupted build keeps what it measured; ``--collect`` writes
the map from the chunks already there.

The map (``.mutation-coverage/<commit>/map.json.gz``, gitignored, derived from the tests and never needed by CI)
keys each executed line so that it survives edits elsewhere in the file: the qualified name of its innermost
function or class, its stripped text, and which occurrence of that text in that scope it is. Every line of a
statement (a multi-line call, a compound statement's header) gets the tests that executed any of them. Beside
the lines, each function and class has the union of its lines' tests (nested functions and methods included),
the next fallback. A test that failed in the build is left out (it would catch every mutant), and so is
what runs while no test does (imports during collection).
"""

from __future__ import annotations

import argparse
import ast
import glob
import gzip
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mutation_sample import TARGETS  # noqa: E402, I001  (the targets' list lives with the sampler)


# -- keys ---------------------------------------------------------------------------------------------------------

class SourceIndex:
    """Where each line of one source file sits: its scope, its statement, its key."""

    def __init__(self, source: str):
        self.lines = source.splitlines()
        tree = ast.parse(source)
        n = len(self.lines) + 2
        self.scope = [""] * n          # innermost def/class qualname whose body holds the line ("" module level)
        self.owner = [""] * n          # innermost def/class whose whole text (header and decorators) holds it
        self.statement = list(range(n))  # the first line of the statement (or compound header) holding the line
        self.runs_at_definition = [True] * n  # a statement of a module's or class's body: runs on import

        def visit(node: ast.AST, qualname: str, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    end = _header_end(child)
                    for line in range(child.lineno, end + 1):
                        self.statement[line] = child.lineno
                        self.scope[line] = qualname
                        self.runs_at_definition[line] = not in_function
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    inner = f"{qualname}.{child.name}" if qualname else child.name
                    first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                    for line in range(first, child.end_lineno + 1):
                        self.owner[line] = inner
                    visit(child, inner, isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))
                else:
                    visit(child, qualname, in_function)

        visit(tree, "", False)
        seen: dict[tuple[str, str], int] = {}
        self.key: dict[int, str] = {}
        for line, text in enumerate(self.lines, 1):
            stripped = text.strip()
            if not stripped or stripped.startswith("#"):
                continue
            occurrence = seen.get((self.scope[line], stripped), 0)
            seen[(self.scope[line], stripped)] = occurrence + 1
            self.key[line] = f"{self.scope[line]}|{occurrence}|{stripped}"


def _header_end(node: ast.stmt) -> int:
    """The last line of a simple statement, or of a compound statement's header (before its body)."""
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.AST) and hasattr(body[0], "lineno"):
        return max(node.lineno, body[0].lineno - 1)
    if isinstance(node, ast.Match) and node.cases:
        return max(node.lineno, node.cases[0].pattern.lineno - 1)
    return node.end_lineno or node.lineno


def _scopes_of(qualname: str) -> list[str]:
    """``a.b.c`` -> ``a.b.c``, ``a.b``, ``a``: the scopes whose union holds a line of ``qualname``."""
    parts = qualname.split(".") if qualname else []
    return [".".join(parts[:i]) for i in range(len(parts), 0, -1)]


def file_map(source: str, executed: dict[int, set[int]]) -> dict:
    """The keyed map of one file from ``executed`` (line -> test indices, coverage's raw line numbers)."""
    index = SourceIndex(source)
    per_statement: dict[int, set[int]] = {}
    for line, tests in executed.items():
        if 0 < line <= len(index.lines):
            per_statement.setdefault(index.statement[line], set()).update(tests)
    lines: dict[str, list[int]] = {}
    scopes: dict[str, set[int]] = {}
    for line in range(1, len(index.lines) + 1):
        tests = per_statement.get(index.statement[line])
        if not tests or line not in index.key:
            continue
        if not index.runs_at_definition[line]:  # import-time lines: whichever test imported first, not a use
            lines[index.key[line]] = sorted(tests)
        for scope in _scopes_of(index.scope[line]):
            scopes.setdefault(scope, set()).update(tests)
    return {"lines": lines, "scopes": {s: sorted(t) for s, t in scopes.items()}}


# -- the build ----------------------------------------------------------------------------------------------------

class _Contexts:
    """pytest plugin: each test's node id as the coverage context while it runs (setup to teardown)."""

    def __init__(self, cov):
        self.cov, self.outcomes, self.seconds = cov, {}, {}

    def pytest_runtest_protocol(self, item, nextitem):
        self.cov.switch_context(item.nodeid)

    def pytest_runtest_logreport(self, report):
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration
        # the call's outcome (an expected failure reads "xfailed": it passes under any mutant), a failure in any
        # phase, else the setup's (a skip)
        if report.failed:
            self.outcomes[report.nodeid] = "failed"
        elif report.when == "call" or report.nodeid not in self.outcomes:
            self.outcomes[report.nodeid] = "xfailed" if hasattr(report, "wasxfail") else report.outcome

    def pytest_runtest_logfinish(self, nodeid, location):
        self.cov.switch_context("")


def _run_chunk(data_file: str, files: list[str]) -> int:
    """In this process: ``files`` under coverage, the data in ``data_file``, each test's outcome and seconds
    beside it (``data_file`` + ``.tests.json``)."""
    import coverage

    # (build passes its root and targets on: a synthetic repository's in the tests)
    root = os.environ.get("MUTATION_COVERAGE_ROOT", ROOT)
    targets = json.loads(os.environ.get("MUTATION_COVERAGE_TARGETS", "null")) or list(TARGETS)
    cov = coverage.Coverage(data_file=data_file, include=[os.path.join(root, t) for t in targets],
                            config_file=False)
    cov.start()
    import pytest

    plugin = _Contexts(cov)
    try:
        rc = pytest.main(["-o", "addopts=", "-p", "no:cacheprovider", "-q", *files],
                         plugins=[plugin])
    finally:
        cov.stop()
        cov.save()
    tests = [{"id": t, "outcome": o, "s": round(plugin.seconds.get(t, 0.0), 3)} for t, o in plugin.outcomes.items()]
    with open(data_file + ".tests.json", "w", encoding="utf-8") as f:
        json.dump({"files": files, "rc": int(rc), "tests": tests}, f)
    return 0


def commit() -> str:
    """HEAD's short hash ("" outside a git checkout)."""
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                          text=True).stdout.strip()


def default_folder() -> str:
    return os.path.join(ROOT, ".mutation-coverage", commit())


def build(files: list[str], folder: str, chunk: int) -> None:
    """Run ``files`` in chunks under coverage; a chunk whose data is already in ``folder`` is not run again."""
    os.makedirs(folder, exist_ok=True)
    chunks = [files[i:i + chunk] for i in range(0, len(files), chunk)]
    for n, part in enumerate(chunks):
        data = os.path.join(folder, f"chunk-{n:03d}")
        if os.path.exists(data + ".tests.json"):
            continue
        started = time.monotonic()
        env = dict(os.environ, MUTATION_COVERAGE_ROOT=ROOT, MUTATION_COVERAGE_TARGETS=json.dumps(list(TARGETS)))
        with subprocess.Popen([sys.executable, os.path.abspath(__file__), "--run-chunk", data, *part], cwd=ROOT,
                              env=env, start_new_session=True) as process:
            try:
                process.wait()
            except BaseException:
                os.killpg(process.pid, signal.SIGKILL)
                raise
        print(f"chunk {n + 1}/{len(chunks)}: {len(part)} files in {time.monotonic() - started:.0f} s "
              f"(exit status {process.returncode})", flush=True)


def collect(folder: str, out: str) -> dict:
    """Write the map of every finished chunk in ``folder`` to ``out`` (gzipped JSON); the map."""
    from coverage import CoverageData

    tests: list[str] = []
    seconds: list[float] = []
    number: dict[str, int] = {}
    executed: dict[str, dict[int, set[int]]] = {path: {} for path in TARGETS}
    files_run: list[str] = []
    for meta in sorted(glob.glob(os.path.join(folder, "chunk-*.tests.json"))):
        with open(meta, encoding="utf-8") as f:
            run = json.load(f)
        files_run += run["files"]
        passed = set()
        for t in run["tests"]:
            if t["outcome"] == "passed" and t["id"] not in number:
                number[t["id"]] = len(tests)
                tests.append(t["id"])
                seconds.append(t["s"])
                passed.add(t["id"])
        data = CoverageData(meta[:-len(".tests.json")])
        data.read()
        for path in TARGETS:
            by_line = data.contexts_by_lineno(os.path.join(ROOT, path))
            for line, contexts in by_line.items():
                ids = {number[c] for c in contexts if c in passed}
                if ids:
                    executed[path].setdefault(line, set()).update(ids)
    files = {}
    for path, lines in executed.items():
        with open(os.path.join(ROOT, path), encoding="utf-8") as f:
            files[path] = file_map(f.read(), lines)
    result = {"commit": commit(), "test_files": files_run, "tests": tests, "seconds": seconds,
              "files": {p: _packed(m) for p, m in files.items()}}
    with gzip.open(out, "wt", encoding="utf-8") as f:
        json.dump(result, f, separators=(",", ":"))
    return result


def _packed(file: dict) -> dict:
    """A file's map with each distinct test set stored once, as ranges of test indices."""
    sets: dict[tuple, int] = {}

    def ref(tests: list[int]) -> int:
        return sets.setdefault(tuple(tests), len(sets))

    lines = {k: ref(v) for k, v in file["lines"].items()}
    scopes = {k: ref(v) for k, v in file["scopes"].items()}
    return {"sets": [_ranges(s) for s in sets], "lines": lines, "scopes": scopes}


def _ranges(tests: tuple) -> list[int]:
    """Sorted indices as flat [start, stop, start, stop ...] runs."""
    out: list[int] = []
    for t in tests:
        if out and out[-1] == t:
            out[-1] = t + 1
        else:
            out += [t, t + 1]
    return out


def load(path: str) -> dict:
    """A map written by ``collect``, each file's test sets unpacked to lists of node ids."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        raw = json.load(f)
    tests = raw["tests"]
    files = {}
    for file, packed in raw["files"].items():
        sets = [[tests[i] for a, b in zip(r[::2], r[1::2]) for i in range(a, b)] for r in packed["sets"]]
        files[file] = {"lines": {k: sets[v] for k, v in packed["lines"].items()},
                       "scopes": {k: sets[v] for k, v in packed["scopes"].items()}}
    return {"commit": raw["commit"], "tests": tests, "seconds": dict(zip(tests, raw["seconds"])), "files": files}


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--run-chunk"]:
        return _run_chunk(argv[1], argv[2:])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("files", nargs="*", help="test files (default: every tests/test_*.py)")
    parser.add_argument("--chunk", type=int, default=40, help="test files per pytest process (default 40)")
    parser.add_argument("--folder", default="",
                        help="where the chunks and map go (default .mutation-coverage/<commit>)")
    parser.add_argument("--collect", action="store_true", help="only write the map from the chunks already run")
    args = parser.parse_args(argv)
    folder = args.folder or default_folder()
    files = args.files or sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "tests", "test_*.py")))
    started = time.monotonic()
    if not args.collect:
        build(files, folder, args.chunk)
    out = os.path.join(folder, "map.json.gz")
    result = collect(folder, out)
    print(f"{out}: {len(result['tests'])} tests of {len(result['test_files'])} files, {os.path.getsize(out)} bytes "
          f"({time.monotonic() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
