"""``ember.hub``: PyTorch's ``torch.hub`` — pretrained weights by URL and models from hubconf.py repositories.

The cache is PyTorch's own: ``get_dir()`` is ``$TORCH_HOME/hub`` (``TORCH_HOME`` defaulting to
``$XDG_CACHE_HOME/torch``, else ``~/.cache/torch``), checkpoints live in ``<hub_dir>/checkpoints/`` and GitHub
repositories in ``<hub_dir>/<owner>_<repo>_<ref>``, so whatever PyTorch has downloaded is found here without
the network, and the other way round. Checkpoints are read with ``ember.load`` (PyTorch's zip format, ember's
format, safetensors).
"""

from __future__ import annotations

import builtins
import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import uuid
import warnings
import zipfile
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url", "set_dir"]

HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")  # "resnet18-f37072fd.pth": the SHA256 prefix check_hash compares
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_GITHUB = "https://github.com"  # where repositories are downloaded from (tests point it at a local server)
_hub_dir: str | None = None


# ---------------------------------------------------------------------------------------------- directories
def _get_torch_home() -> str:
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"),
                                                                   "torch")))


def get_dir() -> str:
    """The hub cache directory: the one ``set_dir`` chose, else ``$TORCH_HOME/hub`` (PyTorch's default)."""
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_torch_home(), "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Use ``d`` (``~`` expanded) as the hub cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


# ---------------------------------------------------------------------------------------------- downloads
def _progress(done: int, total: int | None) -> None:
    sys.stderr.write(f"\r{100 * done / total:.1f}%" if total else f"\r{done:.1f} bytes")
    sys.stderr.flush()


class _PlainTqdm:
    """``torch.hub.tqdm`` where the tqdm package is not installed: PyTorch's stand-in, the same progress line on
    stderr (a percentage, or bytes when the total is unknown)."""

    def __init__(self, total=None, disable=False, unit=None, unit_scale=None, unit_divisor=None) -> None:
        self.total, self.disable, self.n = total, disable, 0

    def update(self, n) -> None:
        if not self.disable:
            self.n += n
            _progress(self.n, self.total)

    def close(self) -> None:
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        if not self.disable:
            sys.stderr.write("\n")


def download_url_to_file(url: str, dst: str, hash_prefix: str | None = None, progress: bool = True) -> None:
    """Download ``url`` to ``dst``: written to ``dst.<random>.partial`` and moved into place only when complete,
    so an interrupted download never leaves a truncated ``dst``. With ``hash_prefix``, the file's SHA256 hex
    digest must start with it, else PyTorch's RuntimeError ``invalid hash value (expected ..., got ...)`` and
    nothing is written. ``progress`` prints the percentage to stderr."""
    dst = os.path.expanduser(dst)
    tmp_dst = f"{dst}.{uuid.uuid4().hex}.partial"
    sha256 = hashlib.sha256() if hash_prefix is not None else None
    try:
        with open(tmp_dst, "w+b") as f, urlopen(Request(url, headers={"User-Agent": "torch.hub"})) as u:
            length = u.info().get_all("Content-Length")
            total = int(length[0]) if length else None
            done = 0
            while buffer := u.read(READ_DATA_CHUNK):
                f.write(buffer)
                if sha256 is not None:
                    sha256.update(buffer)
                done += len(buffer)
                if progress:
                    _progress(done, total)
            if progress:
                sys.stderr.write("\n")
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got "{digest}")')
        shutil.move(tmp_dst, dst)
    finally:
        if os.path.exists(tmp_dst):
            os.remove(tmp_dst)


def _download_or_explain(url: str, dst: str, hash_prefix: str | None, progress: bool) -> None:
    """``download_url_to_file``; when the network fails, the error (the same type) also names the cache path that
    was looked for, so the file can be put there by hand."""
    try:
        download_url_to_file(url, dst, hash_prefix, progress=progress)
    except HTTPError as e:
        e.add_note(f"ember.hub: no cached file at {dst}, and downloading {url} failed")
        raise
    except URLError as e:
        raise URLError(f"no cached file at {dst}, and {url} could not be downloaded ({e.reason}); without a "
                       "network, copy the file to that path (PyTorch's cache is shared)") from e


def load_state_dict_from_url(url: str, model_dir: str | None = None, map_location=None, progress: bool = True,
                             check_hash: bool = False, file_name: str | None = None,
                             weights_only: bool = False) -> dict[str, Any]:
    """The object saved at ``url`` (a state_dict), downloaded once into ``model_dir`` (default
    ``<get_dir()>/checkpoints``) as ``file_name`` (default: the URL's last path component) and read from there
    afterwards, without the network. ``check_hash``: the file name must look like ``name-<sha256 prefix>.ext``
    and the download must match that prefix. ``map_location`` and ``weights_only`` are ``ember.load``'s.
    """
    from .serialization import load as _load

    if os.getenv("TORCH_MODEL_ZOO"):
        warnings.warn("TORCH_MODEL_ZOO is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        match = HASH_REGEX.search(filename) if check_hash else None
        _download_or_explain(url, cached_file, match.group(1) if match else None, progress)
    return _load(cached_file, map_location=map_location, weights_only=weights_only)


# ---------------------------------------------------------------------------------------------- repositories
def _safe_extract_zip(zip_file: zipfile.ZipFile, extract_to: str) -> None:
    """Extract every member, refusing absolute paths and ``..`` (an archive must not write outside)."""
    root = Path(extract_to).resolve(strict=False)
    for member in zip_file.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":" and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(r"[/\\]", name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (root / name).resolve(strict=False).is_relative_to(root):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zip_file.extract(member, root)


def _parse_repo_info(github: str) -> tuple[str, str, str]:
    """(owner, name, ref) of ``"owner/name[:ref]"``. Without a ref PyTorch asks GitHub whether ``main`` exists;
    here a repository cached under exactly one of ``main``/``master`` is used without asking (same answer,
    no network), and offline with nothing cached is PyTorch's RuntimeError."""
    repo_info, _, ref = github.partition(":")
    owner, name = repo_info.split("/")
    if ref:
        return owner, name, ref
    cached = [r for r in ("main", "master") if os.path.exists(os.path.join(get_dir(), f"{owner}_{name}_{r}"))]
    if len(cached) == 1:
        return owner, name, cached[0]
    try:
        with urlopen(f"{_GITHUB}/{owner}/{name}/tree/main/"):
            return owner, name, "main"
    except HTTPError as e:
        if e.code == 404:
            return owner, name, "master"
        raise
    except URLError as e:
        if cached:
            return owner, name, cached[0]
        raise RuntimeError("It looks like there is no internet connection and the repo could not be found in "
                           f"the cache ({get_dir()})") from e


def _check_repo_is_trusted(owner: str, name: str, owner_name_branch: str, trust_repo) -> None:
    """PyTorch's trust check: ``trust_repo=True`` trusts, ``"check"`` asks (on stdin) unless the repository is in
    ``<hub_dir>/trusted_list`` or already cached or owned by PyTorch's trusted owners, ``False`` always asks."""
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    Path(filepath).touch()
    with open(filepath) as file:
        trusted = tuple(line.strip() for line in file)
    owner_name = f"{owner}_{name}"
    is_trusted = owner_name in trusted or owner_name_branch in next(os.walk(hub_dir))[1] \
        or owner in _TRUSTED_REPO_OWNERS
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted repositories and as "
                         "such cannot be downloaded. Do you trust this repository and wish to add it to the trusted "
                         "list of repositories (y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as file:
            file.write(owner_name + "\n")


def _get_cache_or_reload(github: str, force_reload: bool, trust_repo, verbose: bool = True,
                         skip_validation: bool = False) -> str:
    """The directory of repository ``github`` in the hub cache, downloaded (GitHub's zipball) if absent."""
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    owner, name, ref = _parse_repo_info(github)
    normalized_ref = ref.replace("/", "_")
    owner_name_branch = f"{owner}_{name}_{normalized_ref}"
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(owner, name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    # PyTorch also checks, through the GitHub API, that ``ref`` is not a fork's commit; ember does not
    # (skip_validation is accepted): the zipball of ``ref`` is what is downloaded either way.
    cached_file = os.path.join(hub_dir, normalized_ref + ".zip")
    with contextlib.suppress(FileNotFoundError):
        os.remove(cached_file)
    url = f"{_GITHUB}/{owner}/{name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    _download_or_explain(url, cached_file, None, progress=False)
    with zipfile.ZipFile(cached_file) as archive:
        top = archive.infolist()[0].filename.split("/")[0]  # GitHub's "<owner>-<repo>-<sha>/" folder
        extracted = os.path.join(hub_dir, top)
        shutil.rmtree(extracted, ignore_errors=True)
        _safe_extract_zip(archive, hub_dir)
    os.remove(cached_file)
    shutil.rmtree(repo_dir, ignore_errors=True)
    shutil.move(extracted, repo_dir)
    return repo_dir


def _import_hubconf(repo_dir: str):
    """Import ``repo_dir/hubconf.py`` with ``repo_dir`` on sys.path (for its own imports) while it runs."""
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist: a hub repository or directory needs a {MODULE_HUBCONF}")
    spec = importlib.util.spec_from_file_location(MODULE_HUBCONF, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, repo_dir)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(repo_dir)
    return module


def _check_module_exists(name: str) -> bool:
    """Whether module ``name`` can be imported (hubconf ``dependencies`` are checked with it)."""
    return importlib.util.find_spec(name) is not None


def _load_entry_from_hubconf(module, model: str):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    missing = [pkg for pkg in getattr(module, VAR_DEPENDENCY, None) or [] if not _check_module_exists(pkg)]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")
    func = getattr(module, model, None) if model in dir(module) else None
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def list(github: str, force_reload: bool = False, skip_validation: bool = False, trust_repo="check",
         verbose: bool = True) -> builtins.list[str]:
    """The public callables (entrypoints) of repository ``github``'s hubconf.py (``"owner/name[:ref]"``)."""
    module = _import_hubconf(_get_cache_or_reload(github, force_reload, trust_repo, verbose, skip_validation))
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(github: str, model: str, force_reload: bool = False, skip_validation: bool = False,
         trust_repo="check") -> str | None:
    """The docstring of entrypoint ``model`` of repository ``github``."""
    module = _import_hubconf(_get_cache_or_reload(github, force_reload, trust_repo, True, skip_validation))
    return _load_entry_from_hubconf(module, model).__doc__


def load(repo_or_dir: str, model: str, *args, source: str = "github", trust_repo="check",
         force_reload: bool = False, verbose: bool = True, skip_validation: bool = False, **kwargs) -> Any:
    """``model(*args, **kwargs)`` from the hubconf.py of a GitHub repository (``source="github"``,
    ``"owner/name[:ref]"``, cached under ``get_dir()``) or of a local directory (``source="local"``)."""
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo, verbose, skip_validation)
    module = _import_hubconf(repo_or_dir)
    sys.path.insert(0, repo_or_dir)  # an entrypoint may import the repository's modules lazily, as in PyTorch
    try:
        return _load_entry_from_hubconf(module, model)(*args, **kwargs)
    finally:
        sys.path.remove(repo_or_dir)


from ._missing import module_getattr as _module_getattr  # noqa: E402

_missing_name = _module_getattr(__name__)  # a missing name says which torch feature ember lacks


def __getattr__(name: str):
    if name == "tqdm":  # torch.hub.tqdm: the tqdm package's progress bar, imported on first use (it is not small)
        try:
            from tqdm import tqdm
        except ImportError:
            tqdm = _PlainTqdm
        return tqdm
    return _missing_name(name)
