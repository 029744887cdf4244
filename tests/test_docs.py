"""The documentation runs: every code block in README.md and docs/*.md follows the convention, and does what it shows.

Convention: a fenced block says its language. ```python blocks run as standalone scripts from the repository
root; ```bash blocks run line by line from the repository root (each line a command; a trailing backslash joins
lines); ```text and ```console blocks (output, shell sessions, clusters, pseudo-code) are shown, not run. Code is
never put in an indented block, which would escape this test. A block must not leave files in the repository
(write to out/, which git ignores, or to a temporary folder).

A link to a section (``[...](file.md#anchor)``) must name a heading of that file as GitHub anchors it.

A few documented commands take minutes, install things or change committed files; they are listed below in
SKIPPED, each with the reason, and reported as skipped, never passed over silently.
"""

import glob
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

DOCS = ["README.md", *sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))]
RUN, SHOWN = {"python", "bash"}, {"text", "console"}
FENCE = re.compile(r"^(\s*)```(.*)$")

# Documented commands not run here, with the reason.
SKIPPED = {
    "bash scripts/main.sh":
        "creates .venv-main (an install) and trains for about a minute; tests/test_examples.py runs the same "
        "program with small arguments on 2 ranks",
    "bash scripts/test.sh": "the test suite itself (this test is part of it)",
    "cp /tmp/trace/trace_ddp.png docs/images/": "overwrites a committed picture; run by hand to refresh it",
}
# Every benchmark command (docs/benchmarks.md shows the one behind each figure): they take minutes, and timings
# are never tests. Each must still name a script that exists.
BENCHMARK = ".venv-test/bin/python bench/"
ENV_PREFIX = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)+")


def code_blocks(doc):
    """(language, line number of the opening fence, text) of every fenced block in `doc`."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        lines = f.read().splitlines()
    blocks, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang, start = m.group(1), m.group(2).strip(), i + 1
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        if i == len(lines):
            raise AssertionError(f"{doc}:{start}: code block never closed")
        blocks.append((lang, start, "\n".join(body) + "\n"))
        i += 1
    return blocks


def indented_code(doc):
    """Line numbers of indented code blocks: 4+ spaces after a blank line that follows ordinary (unindented,
    non-list) text, outside fences."""
    with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
        lines = f.read().splitlines()
    found, in_fence, context_ok = [], False, True
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip():
            continue
        indent = len(line) - len(line.lstrip(" "))
        if indent >= 4 and context_ok and not lines[n - 2].strip():
            found.append(n)
        if indent == 0:
            # text inside a list item may be indented; an indented block after a list item is its continuation
            context_ok = not re.match(r"([-*+]|\d+[.)])\s", line) and not line.startswith("|")
    return found


def commands(text):
    """The commands of a bash block: one per line, backslash continuations joined, comments and blanks dropped."""
    out, pending = [], ""
    for line in text.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        cmd = (pending + line).strip()
        pending = ""
        if cmd and not cmd.startswith("#"):
            out.append(cmd)
    return out


def without_comment(cmd):
    return re.sub(r"\s+#.*$", "", cmd).strip()


PY_BLOCKS, BASH_COMMANDS = [], []
for _doc in DOCS:
    for _lang, _line, _text in code_blocks(_doc):
        if _lang == "python":
            PY_BLOCKS.append(pytest.param(_doc, _line, _text, id=f"{_doc}:{_line}"))
        elif _lang == "bash":
            for _cmd in commands(_text):
                BASH_COMMANDS.append(pytest.param(_doc, _line, _cmd, id=f"{_doc}:{_line}:{without_comment(_cmd)}"))


def repository_files():
    skip = {".git", "out", "__pycache__", ".pytest_cache", ".ruff_cache", "build"}
    found = set()
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in skip and not d.startswith(".venv") and not d.endswith(".egg-info")]
        found.update(os.path.relpath(os.path.join(folder, f), ROOT) for f in files)
    return found


def run_here(args, timeout):
    env = dict(os.environ, PYTHONPATH=ROOT, PATH=os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"])
    env.pop("WORLD_SIZE", None)
    before = repository_files()
    out = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    left = sorted(repository_files() - before)
    return out, left


@pytest.mark.parametrize("doc", DOCS)
def test_blocks_say_their_language_and_nothing_hides_in_indented_blocks(doc):
    wrong = [f"{doc}:{line}: ```{lang}" for lang, line, _ in code_blocks(doc) if lang not in RUN | SHOWN]
    assert not wrong, f"fenced blocks must be one of {sorted(RUN | SHOWN)}: {wrong}"
    indented = indented_code(doc)
    assert not indented, f"{doc}: indented code blocks at lines {indented}; fence them (```bash, ```text, ...)"


def test_the_lists_name_documented_commands():
    documented = {without_comment(p.values[2]) for p in BASH_COMMANDS}
    stale = sorted(set(SKIPPED) - documented)
    assert not stale, f"SKIPPED lists commands no doc shows any more: {stale}"


@pytest.mark.parametrize("doc,line,text", PY_BLOCKS)
def test_python_block_runs(doc, line, text, tmp_path):
    script = tmp_path / f"{os.path.basename(doc)}_{line}.py"
    script.write_text(text)
    out, left = run_here([sys.executable, str(script)], timeout=120)
    assert out.returncode == 0, f"{doc}:{line} failed:\n{text}\n--- stdout\n{out.stdout}\n--- stderr\n{out.stderr}"
    assert not left, f"{doc}:{line} left files in the repository: {left}"


@pytest.mark.parametrize("doc,line,cmd", BASH_COMMANDS)
def test_bash_command_runs(doc, line, cmd):
    key = without_comment(cmd)
    if key in SKIPPED:
        pytest.skip(f"{doc}:{line} `{key}` not run: {SKIPPED[key]}")
    bench_key = ENV_PREFIX.sub("", key)  # ``OMP_NUM_THREADS=1 .venv-test/bin/python bench/...`` is one too
    if bench_key.startswith(BENCHMARK):
        script = bench_key[len(BENCHMARK):].split()[0]
        assert os.path.exists(os.path.join(ROOT, "bench", script)), f"{doc}:{line} names a missing bench/{script}"
        pytest.skip(f"{doc}:{line} `{key}` not run: benchmarks take minutes; timings are never tests")
    out, left = run_here(["bash", "-c", cmd], timeout=150)
    assert out.returncode == 0, f"{doc}:{line} `{cmd}` failed:\n--- stdout\n{out.stdout}\n--- stderr\n{out.stderr}"
    assert not left, f"{doc}:{line} `{cmd}` left files in the repository: {left}"


HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
ANCHORED_LINK = re.compile(r"\]\(([^)\s]*?)#([^)\s]+)\)")


def _outside_code(doc):
    """(line number, line) of each line of ``doc`` (a path) outside fenced blocks."""
    with open(doc, encoding="utf-8") as f:
        lines = f.read().splitlines()
    inside = False
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            yield n, line


def heading_anchors(doc) -> set:
    """The anchors GitHub gives ``doc``'s headings: lower case, code and link marks dropped, punctuation but ``-``
    and ``_`` removed, spaces made ``-``; a repeated one numbered (``-1``, ``-2``)."""
    seen, anchors = {}, set()
    for _, line in _outside_code(doc):
        m = HEADING.match(line)
        if m:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(2).replace("`", ""))
            anchor = re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")
            count = seen.get(anchor, 0)
            seen[anchor] = count + 1
            anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


@pytest.mark.parametrize("doc", DOCS)
def test_links_to_a_section_name_a_heading_that_exists(doc):
    path = os.path.join(ROOT, doc)
    broken = []
    for n, line in _outside_code(path):
        for target, anchor in ANCHORED_LINK.findall(line):
            if target.startswith(("http:", "https:")):
                continue
            linked = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
            if linked.endswith(".md") and anchor not in heading_anchors(linked):
                broken.append(f"{doc}:{n}: {target}#{anchor}")
    assert not broken, broken
