"""How much of the PyTorch API that public training code uses does ember have?

Two halves:

``scan`` (needs a corpus and PyTorch): walks a directory of public repositories
(``CORPUS/owner+name/...``; ``CORPUS/MANIFEST.tsv`` lists ``owner/name<TAB>commit``),
parses every ``.py`` file and notebook code cell that imports torch with :mod:`ast`, and
records what each file uses:

- ``torch.X`` names: attribute chains and ``from torch... import`` names, resolved through
  import aliases (``import torch.nn.functional as F`` makes ``F.relu`` ``torch.nn.functional.relu``);
  a name counts only if it resolves in the installed PyTorch;
- methods: ``anything.name(...)`` calls where ``name`` is a public attribute of ``torch.Tensor``
  or ``torch.nn.Module`` (a heuristic: the receiver's type is unknown; receivers that are
  other imported modules, such as ``np.mean``, and literals are skipped);
- keyword arguments of those calls: ``torch.sum(keepdim=)``, ``.view(size=)``.

It writes the derived tables (no code of the corpus): ``usage.tsv`` (each entry with its
occurrences and number of files), ``files.tsv`` (for each anonymous file id, the entries the
file uses, as row numbers of usage.tsv), ``repos.tsv`` (repositories, commits, files scanned)
and ``coverage.json`` (the figures against the current ember).

``measure`` (needs only ember and the tables): resolves each entry in ember and returns the
share of entries, of occurrences and of files whose every entry ember has. A keyword counts
as supported when ember's callable accepts it (a parameter of that name, or ``**kwargs``).

    python tools/api_coverage.py scan /work/corpus docs/coverage
    python tools/api_coverage.py report docs/coverage          # figures and top missing, no corpus
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib
import inspect
import json
import os
import sys
from collections import Counter
from pathlib import Path

MAX_FILES_PER_REPO = 150  # so that a few huge repositories (PyG, timm) do not dominate the counts
PYTHON_MODULES_NOT_TENSORS = frozenset("""
np numpy math os sys random re json time torchvision PIL Image cv2 scipy pd pandas plt matplotlib string
itertools functools collections logging pickle shutil glob argparse subprocess copy warnings typing wandb
""".split())
# Tensor method names that, called in public code, are nearly always a builtin's: dict.values(),
# list.index(), queue.put(), PIL's Image.resize().
NOT_TENSOR_METHODS = frozenset({"values", "index", "put", "resize"})


# ---------------------------------------------------------------- resolution (torch or ember)

def resolve(root: str, dotted: str):
    """The object ``root.dotted`` names (``resolve("torch", "nn.functional.relu")``); raises LookupError."""
    try:
        obj = importlib.import_module(root)
    except ImportError as e:
        raise LookupError(root) from e
    path = root
    for part in dotted.split(".") if dotted else ():
        path += "." + part
        try:
            obj = getattr(obj, part)
            continue
        except Exception:  # noqa: BLE001  (MissingFeatureError, AttributeError, a lazy import failing)
            pass
        if not inspect.ismodule(obj):
            raise LookupError(path)
        try:
            obj = importlib.import_module(path)
        except Exception as e:  # noqa: BLE001
            raise LookupError(path) from e
    return obj


def accepts_keyword(fn, keyword: str) -> bool:
    """Whether calling ``fn`` with ``keyword=`` is accepted: a parameter of that name or ``**kwargs``.

    A callable without a Python signature (a C builtin) is given the benefit of the doubt.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return True
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return True
        if p.name == keyword and p.kind is not p.POSITIONAL_ONLY:
            return True
    return False


# Entries: "torch.nn.functional.relu" (a name), ".view[T]" / ".eval[M]" / ".to[TM]" (a method of
# Tensor, Module or both), and either followed by "(keyword=)".

def _classes(root: str, tag: str) -> list:
    return [resolve(root, {"T": "Tensor", "M": "nn.Module"}[c]) for c in tag]


def has_entry(entry: str, root: str = "ember") -> bool:
    """Whether ``root`` (``ember`` or ``torch``) has what ``entry`` names."""
    keyword = None
    if entry.endswith("=)"):
        entry, _, keyword = entry[:-2].partition("(")
    if entry.startswith("."):
        name, _, tag = entry[1:-1].partition("[")
        fns = [getattr(c, name) for c in _classes(root, tag) if hasattr(c, name)]
        if len(fns) < len(tag) if keyword is None else not fns:
            return False
        return keyword is None or any(accepts_keyword(f, keyword) for f in fns)
    try:
        obj = resolve(root, entry.partition(".")[2])
    except LookupError:
        return False
    return keyword is None or accepts_keyword(obj, keyword)


# ---------------------------------------------------------------- extraction

def _torch_method_tags() -> dict[str, str]:
    import torch

    tensor = {n for n in dir(torch.Tensor) if not n.startswith("_")}
    module = {n for n in dir(torch.nn.Module) if not n.startswith("_")}
    names = (tensor | module) - NOT_TENSOR_METHODS
    return {n: ("T" if n in tensor else "") + ("M" if n in module else "") for n in names}


class _FileScan(ast.NodeVisitor):
    """Collects the entries one file uses (with repeats: one per occurrence)."""

    def __init__(self, method_tags: dict[str, str]) -> None:
        self.alias: dict[str, str] = {}  # local name -> "torch..." dotted path
        self.other_modules: set[str] = set(PYTHON_MODULES_NOT_TENSORS)
        self.method_tags = method_tags
        self.found: list[str] = []

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            if a.name == "torch" or a.name.startswith("torch."):
                if a.asname:
                    self.alias[a.asname] = a.name
                else:
                    self.alias["torch"] = "torch"
            else:
                self.other_modules.add(a.asname or a.name.partition(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        mod = node.module or ""
        if node.level == 0 and (mod == "torch" or mod.startswith("torch.")):
            for a in node.names:
                if a.name != "*":
                    self.alias[a.asname or a.name] = f"{mod}.{a.name}"
                    self.found.append(f"{mod}.{a.name}")
        else:  # other modules' names (modules, classes, functions) are not tensors
            self.other_modules.update(a.asname or a.name for a in node.names)

    def _dotted(self, node) -> str | None:
        """``torch.a.b`` for an attribute chain rooted at a torch alias, else None."""
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in self.alias:
            return ".".join([self.alias[node.id], *reversed(parts)])
        return None

    def _root_is_other_module(self, node) -> bool:
        while isinstance(node, ast.Attribute):
            node = node.value
        return (isinstance(node, ast.Name) and node.id in self.other_modules) or isinstance(
            node, (ast.Constant, ast.JoinedStr, ast.List, ast.Dict, ast.Set, ast.Tuple))

    def visit_Attribute(self, node: ast.Attribute) -> None:
        dotted = self._dotted(node)
        if dotted is not None:
            self.found.append(dotted)
            return  # the chain's inner attributes are part of this name
        self.generic_visit(node)

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in self.alias and "." in self.alias[node.id] and isinstance(node.ctx, ast.Load):
            self.found.append(self.alias[node.id])

    def visit_Call(self, node: ast.Call) -> None:
        keywords = [k.arg for k in node.keywords if k.arg]
        func = node.func
        dotted = self._dotted(func) if isinstance(func, ast.Attribute) else (
            self.alias.get(func.id) if isinstance(func, ast.Name) else None)
        if dotted is not None:
            self.found += [f"{dotted}({k}=)" for k in keywords]
        elif isinstance(func, ast.Attribute) and func.attr in self.method_tags and not self._root_is_other_module(
                func.value):
            method = f".{func.attr}[{self.method_tags[func.attr]}]"
            self.found.append(method)
            self.found += [f"{method}({k}=)" for k in keywords]
        self.generic_visit(node)


def _notebook_source(text: str) -> str:
    cells = json.loads(text).get("cells", [])
    lines = []
    for c in cells:
        if c.get("cell_type") == "code":
            src = c.get("source", "")
            src = "".join(src) if isinstance(src, list) else src
            lines += [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
    return "\n".join(lines)


def scan_file(path: Path, method_tags: dict[str, str]) -> list[str] | None:
    """The entries ``path`` uses (one per occurrence), or None when it does not import torch or does not parse."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.suffix == ".ipynb":
            text = _notebook_source(text)
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    scan = _FileScan(method_tags)
    for node in ast.walk(tree):  # imports first, wherever they are, so aliases resolve everywhere
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            scan.visit(node)
    if not scan.alias:
        return None
    scan.found.clear()
    scan.visit(tree)
    return scan.found


def _sample(files: list[Path], repo: str, limit: int) -> list[Path]:
    key = lambda p: hashlib.sha1(f"{repo}/{p}".encode()).hexdigest()  # noqa: E731  (stable, spread over the tree)
    return sorted(sorted(files, key=key)[:limit])


def scan(corpus: Path, out: Path, limit: int = MAX_FILES_PER_REPO) -> None:
    method_tags = _torch_method_tags()
    manifest = dict(line.split("\t") for line in (corpus / "MANIFEST.tsv").read_text().split("\n") if line)
    per_file: list[Counter] = []
    repos = []
    for repo, commit in sorted(manifest.items(), key=lambda kv: kv[0].lower()):
        root = corpus / repo.replace("/", "+")
        candidates = [p for p in root.rglob("*") if p.suffix in (".py", ".ipynb") and p.is_file()]
        scanned = []
        for p in candidates:
            found = scan_file(p, method_tags)
            if found is not None:
                scanned.append((p.relative_to(root), found))
        chosen = set(_sample([p for p, _ in scanned], repo, limit))
        kept = [Counter(f) for p, f in scanned if p in chosen]
        per_file += kept
        repos.append((repo, commit.strip(), len(kept)))
    # Only what the installed PyTorch has: a chain into a user's own attribute is not PyTorch API.
    import torch

    valid = {e for e in set().union(*per_file) if has_entry(e, "torch")}
    occurrences, files = Counter(), Counter()
    for c in per_file:
        for e, n in c.items():
            if e in valid:
                occurrences[e] += n
                files[e] += 1
    entries = sorted(valid, key=lambda e: (-files[e], -occurrences[e], e))
    row = {e: i for i, e in enumerate(entries)}
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "usage.tsv", "w") as f:
        f.write("# entry\tfiles\toccurrences  (row numbers, from 0, are the ids files.tsv uses)\n")
        f.writelines(f"{e}\t{files[e]}\t{occurrences[e]}\n" for e in entries)
    with open(out / "files.tsv", "w") as f:
        f.write("# file\tentries it uses (usage.tsv rows)\n")
        for i, c in enumerate(per_file):
            f.write(f"{i}\t{' '.join(str(r) for r in sorted(row[e] for e in c if e in row))}\n")
    with open(out / "repos.tsv", "w") as f:
        f.write(f"# repository\tcommit\tfiles scanned (at most {limit}; files that import torch)\n")
        f.writelines(f"{r}\t{c}\t{n}\n" for r, c, n in repos)
    figures = measure(out)
    del figures["missing"]
    figures["torch_version"] = torch.__version__.split("+")[0]
    (out / "coverage.json").write_text(json.dumps(figures, indent=1) + "\n")


# ---------------------------------------------------------------- measurement (ember and the tables only)

def load(tables: Path) -> tuple[list[tuple[str, int, int]], list[list[int]]]:
    """usage.tsv rows ``(entry, files, occurrences)`` and, per file, the rows it uses."""
    usage = [(e, int(f), int(n)) for e, f, n in (
        line.split("\t") for line in (tables / "usage.tsv").read_text().split("\n") if line and line[0] != "#")]
    files = [[int(r) for r in rows.split()] for _, _, rows in (
        line.partition("\t") for line in (tables / "files.tsv").read_text().split("\n") if line and line[0] != "#")]
    return usage, files


def measure(tables: Path) -> dict:
    """The coverage figures (percent, one decimal) and the missing entries, most used first."""
    usage, files = load(tables)
    have = [has_entry(e) for e, _, _ in usage]
    covered_files = sum(all(have[r] for r in rows) for rows in files)
    total_occ = sum(n for _, _, n in usage)
    pct = lambda a, b: round(100 * a / b, 1)  # noqa: E731
    return {
        "files": len(files), "entries": len(usage), "occurrences": total_occ,
        "files_covered_pct": pct(covered_files, len(files)),
        "entries_covered_pct": pct(sum(have), len(usage)),
        "occurrences_covered_pct": pct(sum(n for (_, _, n), h in zip(usage, have) if h), total_occ),
        "missing": [(e, f) for (e, f, _), h in zip(usage, have) if not h],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scan", help="scan a corpus and write the tables")
    s.add_argument("corpus", type=Path)
    s.add_argument("out", type=Path)
    s.add_argument("--max-files-per-repo", type=int, default=MAX_FILES_PER_REPO)
    r = sub.add_parser("report", help="figures and the most used missing entries, from the tables")
    r.add_argument("tables", type=Path)
    r.add_argument("--top", type=int, default=50)
    args = parser.parse_args(argv)
    if args.cmd == "scan":
        scan(args.corpus, args.out, args.max_files_per_repo)
        args.tables, args.top = args.out, 50
    figures = measure(args.tables)
    missing = figures.pop("missing")
    print(json.dumps(figures, indent=1))
    print(f"\nmost used missing ({len(missing)} in all): files  entry")
    for e, f in missing[:args.top]:
        print(f"{f:6d}  {e}")


if __name__ == "__main__":
    sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))  # this checkout's ember
    main()
