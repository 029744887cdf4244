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

Each entry gets the installed PyTorch's verdict: a keyword that PyTorch's own function or method does
not accept is not PyTorch's (the call's receiver was something else: Lightning's ``self.log(prog_bar=)``,
``list.sort(key=)``, NumPy's ``.repeat(axis=)``). PyTorch's C functions and Tensor methods have no
Python signature: their keywords come from the type stubs PyTorch ships (``torch/_C/__init__.pyi``,
``torch/_C/_VariableFunctions.pyi``, ...), read with :mod:`ast`, plus the NumPy spellings
(``axis=``, ``keepdims=``) its argument parser maps.

It writes the derived tables (no code of the corpus): ``usage.tsv`` (each entry with its
occurrences, number of files and PyTorch's verdict), ``files.tsv`` (for each anonymous file id, the entries the
file uses, as row numbers of usage.tsv), ``repos.tsv`` (repositories, commits, files scanned)
and ``coverage.json`` (the figures against the current ember; the first scan into a folder also records
them as ``first_measured``, which later scans and ``rejudge`` keep: a held-out corpus's figure before the
names it revealed were added).

Two corpora are measured: ``docs/coverage`` (the main one, whose missing names were added entry by entry) and
``docs/coverage/heldout`` (other public repositories, none of the main corpus's: ``--disjoint-from`` refuses
a corpus that shares a repository with the tables named), so that a figure on code nobody had looked at
stays measured. ``CORPORA`` names them; the tests guard both.

``measure`` (needs only ember and the tables): resolves each of PyTorch's entries in ember and
returns the share of entries, of occurrences and of files whose every PyTorch entry ember has;
the entries that are not PyTorch's are listed apart and left out of every figure. A keyword counts
as supported when ember's callable accepts it (a parameter of that name, or ``**kwargs``).

    python tools/api_coverage.py scan /work/corpus docs/coverage
    python tools/api_coverage.py scan /work/heldout-corpus docs/coverage/heldout --disjoint-from docs/coverage
    python tools/api_coverage.py report docs/coverage          # figures and top missing, no corpus
    python tools/api_coverage.py rejudge docs/coverage         # PyTorch's verdicts again, no corpus
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
import warnings
from collections import Counter
from pathlib import Path

# The measured corpora: {name: their tables, relative to the repository's root}
CORPORA = {"main": Path("docs/coverage"), "heldout": Path("docs/coverage/heldout")}
MAX_FILES_PER_REPO = 150  # so that a few huge repositories (PyG, timm) do not dominate the counts
PYTHON_MODULES_NOT_TENSORS = frozenset("""
np numpy math os sys random re json time torchvision PIL Image cv2 scipy pd pandas plt matplotlib string
itertools functools collections logging pickle shutil glob argparse subprocess copy warnings typing wandb
""".split())
# Tensor method names that, called in public code, are nearly always a builtin's: dict.values(),
# list.index(), queue.put(), PIL's Image.resize().
NOT_TENSOR_METHODS = frozenset({"values", "index", "put", "resize"})
# The NumPy keyword spellings PyTorch's argument parser accepts for its native ops' own names
# (``x.sum(axis=0)``, ``torch.add(x1=a, x2=b)``); the type stubs list only the own names.
NUMPY_SPELLINGS = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


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
            with warnings.catch_warnings():  # a deprecated name (torch.has_cuda) warns when read: it is there
                warnings.simplefilter("ignore")
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

    A callable without a Python signature (a C builtin) is judged by PyTorch's type stubs, which
    list every overload's parameters, plus the NumPy spellings PyTorch's argument parser maps for
    every native op; one that no stub names is given the benefit of the doubt.
    """
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        overloads = _stub_overloads(fn)
        own = NUMPY_SPELLINGS.get(keyword, keyword)
        return overloads is None or any(keyword in o or own in o or "**" in o for o in overloads)
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            return True
        if p.name == keyword and p.kind is not p.POSITIONAL_ONLY:
            return True
    return False


_STUBS: dict[tuple[str, str], list[set[str]]] | None = None


def _stub_overloads(fn) -> list[set[str]] | None:
    """The keywords each overload of a torch C builtin accepts (``"**"`` for ``**kwargs``), from the
    ``.pyi`` stubs PyTorch ships; None when ``fn`` is not torch's or no stub describes it."""
    owner = getattr(fn, "__objclass__", None)  # a method descriptor: torch._C.TensorBase.sum
    module = owner.__module__ if owner is not None else getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None)
    if not (isinstance(module, str) and isinstance(qualname, str) and module.partition(".")[0] == "torch"):
        return None
    cls, _, name = qualname.rpartition(".")
    if cls == "_VariableFunctionsClass":  # torch.sum and the other torch.* builtins
        module, qualname = "torch._C._VariableFunctions", name
    return _stubs().get((module, qualname))


def _stubs() -> dict[tuple[str, str], list[set[str]]]:
    """``(module, "Class.method" or "function")`` -> the keyword sets of its overloads, from every
    ``.pyi`` file of the installed PyTorch (parsed with :mod:`ast`, nothing imported)."""
    global _STUBS
    if _STUBS is None:
        _STUBS = {}
        root = Path(sys.modules["torch"].__file__).parent
        for path in root.rglob("*.pyi"):
            parts = path.relative_to(root.parent).with_suffix("").parts
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            try:
                tree = ast.parse(path.read_text(encoding="utf-8"))
            except SyntaxError:
                continue
            for node in tree.body:
                for fn, owner in ([(node, None)] if not isinstance(node, ast.ClassDef) else
                                  [(f, node) for f in node.body]):
                    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        key = (module, fn.name if owner is None else f"{owner.name}.{fn.name}")
                        _STUBS.setdefault(key, []).append(_stub_keywords(fn, method=owner is not None))
    return _STUBS


def _stub_keywords(fn: ast.FunctionDef, method: bool) -> set[str]:
    a = fn.args
    static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list)
    named = a.args[1:] if method and not static and a.args else a.args
    # before "/" and, by the stubs' older convention, "__x" names are positional-only
    keywords = {p.arg for p in [*named, *a.kwonlyargs] if not p.arg.startswith("__")}
    return keywords | ({"**"} if a.kwarg else set())


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


def repositories(tables: Path) -> list[str]:
    """The repositories (``owner/name``) whose files ``tables`` were scanned from (its repos.tsv)."""
    return [line.partition("\t")[0] for line in (tables / "repos.tsv").read_text().split("\n")
            if line and line[0] != "#"]


def scan(corpus: Path, out: Path, limit: int = MAX_FILES_PER_REPO, disjoint_from: list[Path] = ()) -> None:
    method_tags = _torch_method_tags()
    manifest = dict(line.split("\t") for line in (corpus / "MANIFEST.tsv").read_text().split("\n") if line)
    for tables in disjoint_from:  # (GitHub's names are case-insensitive)
        shared = {r.lower() for r in manifest} & {r.lower() for r in repositories(tables)}
        if shared:
            raise SystemExit(f"{corpus}: these repositories are already in {tables}: {sorted(shared)}")
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
    # Only what the installed PyTorch names: a chain into a user's own attribute is not PyTorch API.
    named = {e for e in set().union(*per_file) if has_entry(_without_keyword(e), "torch")}
    occurrences, files = Counter(), Counter()
    for c in per_file:
        for e, n in c.items():
            if e in named:
                occurrences[e] += n
                files[e] += 1
    entries = sorted(named, key=lambda e: (-files[e], -occurrences[e], e))
    row = {e: i for i, e in enumerate(entries)}
    out.mkdir(parents=True, exist_ok=True)
    _write_usage(out, [(e, files[e], occurrences[e]) for e in entries])
    with open(out / "files.tsv", "w") as f:
        f.write("# file\tentries it uses (usage.tsv rows)\n")
        for i, c in enumerate(per_file):
            f.write(f"{i}\t{' '.join(str(r) for r in sorted(row[e] for e in c if e in row))}\n")
    with open(out / "repos.tsv", "w") as f:
        f.write(f"# repository\tcommit\tfiles scanned (at most {limit}; files that import torch)\n")
        f.writelines(f"{r}\t{c}\t{n}\n" for r, c, n in repos)
    _write_figures(out)


def _without_keyword(entry: str) -> str:
    return entry[:-2].partition("(")[0] if entry.endswith("=)") else entry


def _write_usage(out: Path, rows: list[tuple[str, int, int]]) -> None:
    """usage.tsv, with the verdict of the installed PyTorch on each entry: ``no`` for a keyword
    that PyTorch's own function or method does not accept (Lightning's ``self.log(prog_bar=)``,
    ``list.sort(key=)``, NumPy's ``.repeat(axis=)``: the receiver was not a tensor)."""
    with open(out / "usage.tsv", "w") as f:
        f.write("# entry\tfiles\toccurrences\tPyTorch's (no: PyTorch itself lacks it; not counted)"
                "  (row numbers, from 0, are the ids files.tsv uses)\n")
        f.writelines(f"{e}\t{n_files}\t{n}\t{'yes' if has_entry(e, 'torch') else 'no'}\n" for e, n_files, n in rows)


def _write_figures(out: Path) -> None:
    """coverage.json: the figures against the current ember, and ``first_measured``, those of the first
    scan into ``out`` (kept ever after)."""
    import torch

    figures = measure(out)
    del figures["missing"], figures["not_pytorch"]
    figures["torch_version"] = torch.__version__.split("+")[0]
    path = out / "coverage.json"
    previous = json.loads(path.read_text()) if path.exists() else None
    if previous is None:
        figures["first_measured"] = {k: figures[k] for k in FIGURES}
    elif "first_measured" in previous:
        figures["first_measured"] = previous["first_measured"]
    path.write_text(json.dumps(figures, indent=1) + "\n")


def rejudge(tables: Path) -> None:
    """Re-derive the verdicts of committed tables against the installed PyTorch, without the corpus:
    usage.tsv names every entry, so its verdict column and coverage.json are rewritten (files.tsv,
    whose row numbers do not change, is kept)."""
    usage, _ = load(tables)
    _write_usage(tables, [(e, n_files, n) for e, n_files, n, _ in usage])
    _write_figures(tables)


# ---------------------------------------------------------------- measurement (ember and the tables only)

def load(tables: Path) -> tuple[list[tuple[str, int, int, bool]], list[list[int]]]:
    """usage.tsv rows ``(entry, files, occurrences, PyTorch's)`` and, per file, the rows it uses.

    Tables without the verdict column (written before it existed) read as all PyTorch's."""
    usage = []
    for line in (tables / "usage.tsv").read_text().split("\n"):
        if line and line[0] != "#":
            e, n_files, n, *verdict = line.split("\t")
            usage.append((e, int(n_files), int(n), verdict != ["no"]))
    files = [[int(r) for r in rows.split()] for _, _, rows in (
        line.partition("\t") for line in (tables / "files.tsv").read_text().split("\n") if line and line[0] != "#")]
    return usage, files


FIGURES = ("files_covered_pct", "entries_covered_pct", "occurrences_covered_pct")


def measure(tables: Path) -> dict:
    """The coverage figures (percent, one decimal) over PyTorch's entries, the missing ones, most used
    first, and the entries PyTorch itself does not have (left out of the figures)."""
    usage, files = load(tables)
    have = [not torch_has or has_entry(e) for e, _, _, torch_has in usage]
    counted = [(e, f, n, h) for (e, f, n, torch_has), h in zip(usage, have) if torch_has]
    covered_files = sum(all(have[r] for r in rows) for rows in files)
    total_occ = sum(n for _, _, n, _ in counted)
    pct = lambda a, b: round(100 * a / b, 1)  # noqa: E731
    return {
        "files": len(files), "entries": len(counted), "occurrences": total_occ,
        "files_covered_pct": pct(covered_files, len(files)),
        "entries_covered_pct": pct(sum(h for *_, h in counted), len(counted)),
        "occurrences_covered_pct": pct(sum(n for _, _, n, h in counted if h), total_occ),
        "entries_not_pytorch": len(usage) - len(counted),
        "missing": [(e, f) for e, f, _, h in counted if not h],
        "not_pytorch": [(e, f) for e, f, _, torch_has in usage if not torch_has],
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("scan", help="scan a corpus and write the tables")
    s.add_argument("corpus", type=Path)
    s.add_argument("out", type=Path)
    s.add_argument("--max-files-per-repo", type=int, default=MAX_FILES_PER_REPO)
    s.add_argument("--disjoint-from", type=Path, action="append", default=[], metavar="TABLES",
                   help="refuse a corpus sharing a repository with these tables (a held-out corpus)")
    r = sub.add_parser("report", help="figures and the most used missing entries, from the tables")
    r.add_argument("tables", type=Path)
    r.add_argument("--top", type=int, default=50)
    j = sub.add_parser("rejudge", help="re-derive the tables' PyTorch verdicts and figures (no corpus)")
    j.add_argument("tables", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "scan":
        scan(args.corpus, args.out, args.max_files_per_repo, args.disjoint_from)
        args.tables, args.top = args.out, 50
    elif args.cmd == "rejudge":
        rejudge(args.tables)
        args.top = 50
    figures = measure(args.tables)
    missing, not_pytorch = figures.pop("missing"), figures.pop("not_pytorch")
    print(json.dumps(figures, indent=1))
    print(f"\nmost used missing ({len(missing)} in all): files  entry")
    for e, f in missing[:args.top]:
        print(f"{f:6d}  {e}")
    print(f"\nnot PyTorch's, left out of the figures ({len(not_pytorch)} in all): files  entry")
    for e, f in not_pytorch[:args.top]:
        print(f"{f:6d}  {e}")


if __name__ == "__main__":
    sys.path.insert(0, os.fspath(Path(__file__).resolve().parent.parent))  # this checkout's ember
    main()
