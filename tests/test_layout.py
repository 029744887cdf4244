"""The code's layout: ember's own modules never import ember.diagnostics (the diagnostics attach to public
hooks), and docs/ARCHITECTURE.md's layout lists every file under ember/."""

import ast
import os
import re
from pathlib import Path

from conftest import ROOT

EMBER = os.path.join(ROOT, "ember")


def ember_files():
    for folder, _, files in os.walk(EMBER):
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                yield os.path.relpath(path, ROOT).replace(os.sep, "/"), path


def imported_modules(rel: str, path: str) -> set[str]:
    """Absolute names of the ember modules a file imports (relative imports resolved)."""
    package = rel[:-3].replace("/", ".")
    if package.endswith(".__init__"):
        package = package[: -len(".__init__")]
    else:
        package = package.rsplit(".", 1)[0]
    out = set()
    for node in ast.walk(ast.parse(Path(path).read_text())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                parts = parts[: len(parts) - node.level + 1]
                base = ".".join(parts + ([node.module] if node.module else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return {m for m in out if m == "ember" or m.startswith("ember.")}


def test_no_core_module_imports_diagnostics():
    offenders = []
    for rel, path in ember_files():
        if rel.startswith("ember/diagnostics/") or rel == "ember/compat.py":
            continue  # the runner of PyTorch programs enables the diagnostics (its documented default)
        if any(m == "ember.diagnostics" or m.startswith("ember.diagnostics.") for m in imported_modules(rel, path)):
            offenders.append(rel)
    assert offenders == [], f"these modules import ember.diagnostics (use the public hooks instead): {offenders}"


def test_the_import_check_sees_relative_imports():
    """The check above is not vacuous: it resolves the relative imports diagnostics itself uses."""
    rel = "ember/diagnostics/__init__.py"
    assert "ember.diagnostics.loop" in imported_modules(rel, os.path.join(ROOT, rel))
    rel = "ember/nn/modules/module.py"
    assert "ember.utils.hooks" in imported_modules(rel, os.path.join(ROOT, rel))


def listed_paths() -> set[str]:
    """The files named in the layout block of docs/ARCHITECTURE.md (indentation gives the folder)."""
    text = Path(ROOT, "docs", "ARCHITECTURE.md").read_text()
    block = text.split("## Layout", 1)[1].split("\n## ", 1)[0]
    stack: list[tuple[int, str]] = []
    found = set()
    for line in block.splitlines():
        m = re.match(r"^( +)(\S.*?)(?:\s{2,}.*)?$", line)
        if not m or line.strip().startswith("#"):
            continue
        indent, entry = len(m.group(1)), m.group(2).strip()
        while stack and stack[-1][0] >= indent:
            stack.pop()
        prefix = "/".join(s[1] for s in stack)
        names = [n.strip() for n in re.split(r",\s*", entry)]
        for name in names:
            name = name.split()[0]
            if name.endswith("/"):
                stack.append((indent, name.rstrip("/")))
            elif name.endswith(".py"):
                found.add(f"{prefix}/{name}" if prefix else name)
    return found


def test_architecture_lists_every_file_under_ember():
    listed = listed_paths()
    missing = [rel for rel, _ in ember_files() if rel not in listed and not rel.endswith("__init__.py")]
    assert missing == [], f"docs/ARCHITECTURE.md's layout does not list: {missing}"


def test_architecture_layout_parser_reads_nesting():
    listed = listed_paths()
    assert {"ember/_tensor.py", "ember/autograd/engine.py", "ember/distributed/reducer.py"} <= listed
