"""scripts/_venv.sh, the set-up behind the README's two commands: it never hangs on the network and says what is wrong."""

import functools
import http.server
import os
import socket
import subprocess
import sys
import threading
import time

import pytest
from conftest import ROOT

VENV_SH = os.path.join(ROOT, "scripts", "_venv.sh")


def bash(snippet, env=None, timeout=30):
    """Run `snippet` in bash after sourcing scripts/_venv.sh."""
    return subprocess.run(["bash", "-c", f". {VENV_SH}\n{snippet}"], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=dict(os.environ, **(env or {})))


def probe(url):
    start = time.monotonic()
    out = bash('_torch_cpu_index_reachable python3 && echo reachable || echo unreachable',
               env={"TORCH_CPU_INDEX": url})
    return out.stdout.strip(), time.monotonic() - start


def test_cpu_index_probe_gives_up_within_seconds_on_a_silent_server():
    with socket.socket() as server:  # accepts connections, never answers
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        answer, seconds = probe(f"http://127.0.0.1:{server.getsockname()[1]}/whl/cpu")
    assert answer == "unreachable" and seconds < 15


def test_cpu_index_probe_fails_fast_on_a_closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again when the block ends: nothing listens there
    answer, seconds = probe(f"http://127.0.0.1:{port}/whl/cpu")
    assert answer == "unreachable" and seconds < 10


def test_cpu_index_probe_accepts_an_index_that_answers(tmp_path):
    (tmp_path / "whl" / "cpu" / "torch").mkdir(parents=True)
    (tmp_path / "whl" / "cpu" / "torch" / "index.html").write_text("<html></html>")
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(tmp_path)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        answer, _ = probe(f"http://127.0.0.1:{server.server_address[1]}/whl/cpu")
    finally:
        server.shutdown()
        server.server_close()
    assert answer == "reachable"


def test_missing_python_is_named():
    out = bash("_base_python", env={"PYTHON": "/nonexistent/python3"})
    assert out.returncode != 0
    assert "'/nonexistent/python3' not found; install Python 3.10 or newer" in out.stdout + out.stderr


def test_too_old_python_is_refused():
    old = next((p for p in ("/usr/bin/python3.9", os.path.expanduser("~/.pyenv/versions/3.9.18/bin/python3.9"))
                if os.access(p, os.X_OK)), None)
    if old is None:
        pytest.skip("no Python 3.9 interpreter on this machine")
    out = bash("_base_python", env={"PYTHON": old})
    assert out.returncode != 0 and "ember needs Python 3.10 or newer" in out.stderr


@pytest.mark.parametrize("script", ["scripts/_venv.sh", "scripts/test.sh", "scripts/main.sh",
                                    "scripts/check_pythons.sh", ".ci/run"])
def test_scripts_parse_and_stop_on_errors(script):
    path = os.path.join(ROOT, script)
    assert subprocess.run(["bash", "-n", path], capture_output=True).returncode == 0
    if script != "scripts/_venv.sh":  # sourced, not run
        with open(path) as f:
            assert "set -euo pipefail" in f.read(), f"{script} must stop at the first failing command"


def fake_venv(tmp_path):
    """A directory that looks like a made virtual environment whose python only records each call's arguments and
    PYTHONWARNINGS (one line per call), so that ensure_venv's install steps run without a network or pip."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    python = venv / "bin" / "python"
    python.write_text(f'#!/bin/sh\nprintf "%s | %s\\n" "$*" "${{PYTHONWARNINGS-}}" >> {log}\n')
    python.chmod(0o755)
    (venv / "bin" / "activate").write_text("")
    return venv, log


@pytest.mark.parametrize("user_filters", ["", "error::DeprecationWarning"])
def test_editable_install_silences_setuptools_boxed_advice_only(tmp_path, user_filters):
    # setuptools warns "Editable installation." in a box on every `pip install -e`, and pip relays it even with -q:
    # on the README's first run that box was the loudest thing on the screen, advice not meant for this layout
    venv, log = fake_venv(tmp_path)
    out = bash(f"ensure_venv {venv} plot", env={"PYTHONWARNINGS": user_filters})
    assert out.returncode == 0, out.stdout + out.stderr
    editable = [line for line in log.read_text().splitlines() if "install -q -e" in line]
    assert len(editable) == 1, log.read_text()
    filters = editable[0].split(" | ")[1].split(",")
    assert "ignore:Editable installation" in filters
    assert (user_filters in filters) == bool(user_filters)  # the user's own filters are kept


def test_the_filter_matches_setuptools_message_and_nothing_else():
    # the message setuptools' InformationOnly.emit("Editable installation.", details) warns, and another one
    code = ("import warnings\n"
            "with warnings.catch_warnings(record=True) as got:\n"
            "    warnings.warn('Editable installation.\\n!!\\n\\n****\\nPlease be careful with folders', UserWarning)\n"
            "    warnings.warn('Some other build warning', UserWarning)\n"
            "print([str(w.message) for w in got])\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30,
                         env=dict(os.environ, PYTHONWARNINGS="ignore:Editable installation"))
    assert out.stdout.strip() == "['Some other build warning']", out.stdout + out.stderr
