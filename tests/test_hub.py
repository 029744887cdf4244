"""ember.hub against torch.hub: the cache directory, downloads from a local HTTP server (127.0.0.1 only), cache
hits without the server, hash checks, offline errors, and hubconf.py repositories (local and cached GitHub)."""

import hashlib
import http.server
import os
import subprocess
import sys
import threading
import zipfile
from urllib.error import HTTPError, URLError

import numpy as np
import pytest
import torch
from oracle import assert_close

import ember
import ember.hub as hub

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Server:
    """A threaded HTTP server on 127.0.0.1 serving ``root``; counts the requests it answers."""

    def __init__(self, root):
        self.requests = []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self):
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.timeout = 5
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


@pytest.fixture
def served(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    server = Server(root)
    yield root, server
    server.stop()


@pytest.fixture
def hub_dir(tmp_path, monkeypatch):
    """A fresh hub directory for both frameworks (restored afterwards)."""
    d = tmp_path / "hub"
    saved = (hub._hub_dir, torch.hub._hub_dir)
    hub.set_dir(str(d))
    torch.hub.set_dir(str(d))
    yield d
    hub._hub_dir, torch.hub._hub_dir = saved


def _checkpoint(root, stem="tiny", hash_len=8):
    """A torch.save'd state_dict in ``root`` named ``stem-<sha256 prefix>.pth``; returns (name, state)."""
    torch.manual_seed(0)
    state = torch.nn.Linear(3, 2).state_dict()
    tmp = root / "tmp.pth"
    torch.save(state, tmp)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    name = f"{stem}-{digest[:hash_len]}.pth"
    tmp.rename(root / name)
    return name, state


@pytest.mark.parametrize("env", [{}, {"XDG_CACHE_HOME": "/x/cache"}, {"TORCH_HOME": "~/th"},
                                 {"TORCH_HOME": "/t", "XDG_CACHE_HOME": "/x"}])
def test_get_dir_is_pytorchs(env, monkeypatch):
    monkeypatch.delenv("TORCH_HOME", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(hub, "_hub_dir", None)
    monkeypatch.setattr(torch.hub, "_hub_dir", None)
    assert hub.get_dir() == torch.hub.get_dir()
    hub.set_dir("~/elsewhere")
    assert hub.get_dir() == os.path.expanduser("~/elsewhere")


def test_load_state_dict_from_url_downloads_then_uses_the_cache(served, hub_dir):
    root, server = served
    name, state = _checkpoint(root)
    url = f"{server.url}/{name}"
    loaded = hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    assert list(loaded) == list(state)
    for k in state:
        assert_close(loaded[k], state[k])
    assert (hub_dir / "checkpoints" / name).is_file()
    assert not [p for p in (hub_dir / "checkpoints").iterdir() if p.suffix == ".partial"]
    server.stop()  # no network from now on: the cached file is used
    again = hub.load_state_dict_from_url(url, map_location="cpu")
    assert_close(again["weight"], state["weight"])
    assert len(server.requests) == 1
    # the cache is shared: PyTorch reads what ember downloaded without downloading it
    assert torch.equal(torch.hub.load_state_dict_from_url(url)["bias"], state["bias"])


def test_file_name_model_dir_and_safetensors(served, tmp_path, hub_dir):
    root, server = served
    from ember.serialization.safetensors import save_file

    weights = {"w": ember.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))}
    save_file(weights, str(root / "model.safetensors"))
    out = hub.load_state_dict_from_url(f"{server.url}/model.safetensors", model_dir=str(tmp_path / "m"),
                                       file_name="renamed.safetensors", progress=False)
    assert (tmp_path / "m" / "renamed.safetensors").is_file()
    assert np.array_equal(out["w"].numpy(), weights["w"].numpy())


def test_hash_mismatch_is_pytorchs_error_and_leaves_nothing(served, hub_dir, tmp_path):
    root, server = served
    name, _ = _checkpoint(root)
    wrong = name.replace(name.split("-")[1][:8], "deadbeef")
    (root / name).rename(root / wrong)
    url = f"{server.url}/{wrong}"
    with pytest.raises(RuntimeError) as theirs:
        torch.hub.load_state_dict_from_url(url, model_dir=str(tmp_path / "t"), check_hash=True, progress=False)
    with pytest.raises(RuntimeError, match='invalid hash value \\(expected "deadbeef", got "') as ours:
        hub.load_state_dict_from_url(url, check_hash=True, progress=False)
    assert str(ours.value) == str(theirs.value)
    assert list((hub_dir / "checkpoints").iterdir()) == []
    with pytest.raises(RuntimeError, match="invalid hash value"):
        hub.download_url_to_file(url, str(tmp_path / "direct"), hash_prefix="00", progress=False)
    hub.download_url_to_file(url, str(tmp_path / "direct"), hash_prefix="", progress=True)
    assert (tmp_path / "direct").read_bytes() == (root / wrong).read_bytes()


def test_offline_without_cache_names_the_path_and_url(served, hub_dir):
    root, server = served
    url = f"{server.url}/missing.pth"
    with pytest.raises(HTTPError) as e:
        hub.load_state_dict_from_url(url, progress=False)
    assert e.value.code == 404 and "no cached file at" in "".join(e.value.__notes__)
    server.stop()
    with pytest.raises(URLError) as e:
        hub.load_state_dict_from_url(url, progress=False)
    assert str(hub_dir / "checkpoints" / "missing.pth") in str(e.value) and url in str(e.value)
    assert list((hub_dir / "checkpoints").iterdir()) == []


HUBCONF = '''
"""A hub repository for the tests."""
dependencies = ["numpy"]
from helper import scale  # the repository's own module: importable while hubconf runs


def tiny(n=2, pretrained=False):
    """Builds a tiny model."""
    return ("tiny", scale(n), pretrained)


def needs_missing():
    return None


_private = tiny
'''


def _repo(path, extra=""):
    path.mkdir(parents=True)
    (path / "hubconf.py").write_text(HUBCONF + extra)
    (path / "helper.py").write_text("def scale(n):\n    return 10 * n\n")
    return path


def test_local_hubconf(tmp_path, hub_dir):
    repo = _repo(tmp_path / "repo")
    assert hub.load(str(repo), "tiny", 3, source="local", pretrained=True) == ("tiny", 30, True)
    assert torch.hub.load(str(repo), "tiny", 3, source="local", pretrained=True) == ("tiny", 30, True)
    assert str(repo) not in sys.path
    with pytest.raises(RuntimeError, match="Cannot find callable nope in hubconf"):
        hub.load(str(repo), "nope", source="local")
    with pytest.raises(ValueError, match='Unknown source: "svn". Allowed values: "github" | "local".'):
        hub.load(str(repo), "tiny", source="svn")
    bad = _repo(tmp_path / "bad", extra='dependencies = ["numpy", "no_such_package_xyz"]\n')
    with pytest.raises(RuntimeError, match="Missing dependencies: no_such_package_xyz"):
        hub.load(str(bad), "tiny", source="local")
    with pytest.raises(FileNotFoundError, match="hubconf.py"):
        hub.load(str(tmp_path), "tiny", source="local")


def test_cached_github_repo_needs_no_network(hub_dir):
    _repo(hub_dir / "someone_models_main")
    assert hub.load("someone/models", "tiny", trust_repo=True) == ("tiny", 20, False)
    assert hub.load("someone/models:main", "tiny", 1, trust_repo=True) == ("tiny", 10, False)
    assert hub.list("someone/models", trust_repo=True) == ["needs_missing", "scale", "tiny"]
    assert hub.help("someone/models", "tiny", trust_repo=True) == "Builds a tiny model."
    assert (hub_dir / "trusted_list").read_text() == ""  # a cached repository counts as trusted already


def test_untrusted_repo_asks(hub_dir, monkeypatch):
    _repo(hub_dir / "stranger_models_v2")
    (hub_dir / "trusted_list").write_text("")
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    # a cached repository counts as trusted (PyTorch's legacy rule); trust_repo=False asks anyway
    with pytest.raises(Exception, match="Untrusted repository."):
        hub.load("stranger/models:v2", "tiny", trust_repo=False)
    monkeypatch.setattr("builtins.input", lambda prompt: "maybe")
    with pytest.raises(ValueError, match="Unrecognized response maybe."):
        hub.load("stranger/models:v2", "tiny", trust_repo=False)


def test_github_repo_downloaded_from_the_server(served, hub_dir, monkeypatch, tmp_path):
    root, server = served
    src = _repo(tmp_path / "src")
    (root / "owner" / "proj" / "zipball").mkdir(parents=True)
    with zipfile.ZipFile(root / "owner" / "proj" / "zipball" / "v1", "w") as z:
        for f in ("hubconf.py", "helper.py"):
            z.write(src / f, f"owner-proj-abc123/{f}")
    monkeypatch.setattr(hub, "_GITHUB", server.url)
    assert hub.load("owner/proj:v1", "tiny", 4, trust_repo=True) == ("tiny", 40, False)
    assert (hub_dir / "owner_proj_v1" / "hubconf.py").is_file()
    assert (hub_dir / "trusted_list").read_text().split() == ["owner_proj"]  # trust_repo=True remembers it
    assert not (hub_dir / "v1.zip").exists() and not (hub_dir / "owner-proj-abc123").exists()
    server.stop()
    assert hub.load("owner/proj:v1", "tiny", trust_repo=True) == ("tiny", 20, False)
    with pytest.raises(URLError, match="could not be downloaded"):
        hub.load("owner/proj:v1", "tiny", trust_repo=True, force_reload=True)
    with pytest.raises(RuntimeError, match="no internet connection and the repo could not be found in the cache"):
        hub.load("owner/other", "tiny", trust_repo=True)


def test_unsafe_zip_entries_are_refused(tmp_path):
    path = tmp_path / "evil.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("../escape.txt", "x")
    with zipfile.ZipFile(path) as z, pytest.raises(ValueError, match="directory traversal"):
        hub._safe_extract_zip(z, str(tmp_path / "out"))
    assert not (tmp_path / "escape.txt").exists()


def test_torch_hub_under_compat(tmp_path):
    """An unmodified script: ``torch.hub.load`` of a local hubconf that imports torch gets ember's modules."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "hubconf.py").write_text("import torch\n\ndef linear(n):\n    return torch.nn.Linear(n, 1)\n")
    script = tmp_path / "s.py"
    script.write_text(f"import torch\nm = torch.hub.load({str(repo)!r}, 'linear', 3, source='local')\n"
                      "print(type(m).__module__, torch.hub.get_dir() == torch.hub.get_dir())\n")
    out = subprocess.run([sys.executable, "-m", "ember.compat", str(script)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYTHONPATH=ROOT))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember.nn.modules.linear", "True"]


def test_model_zoo_load_url_is_load_state_dict_from_url():
    import ember.utils.model_zoo as model_zoo

    assert model_zoo.load_url is hub.load_state_dict_from_url
