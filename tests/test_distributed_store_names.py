"""``PrefixStore``, the debug level and the stores ember does not offer, next to PyTorch's (one process: these need
no ranks)."""

import os
import subprocess
import sys
from datetime import timedelta

import pytest
import torch.distributed as tdist

import ember
import ember.distributed as dist
from ember.distributed import debug_level

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def session(m):
    """The same calls on PyTorch's stores (m=torch.distributed) and ember's: what each returned or raised."""
    base = m.HashStore()
    base.set("x", "1")
    pre = m.PrefixStore("pre", base)
    inner = m.PrefixStore("q", pre)
    out = []
    for call in (lambda: pre.set("a", b"v"), lambda: base.get("pre/a"), lambda: pre.get("a"),
                 lambda: pre.num_keys(), lambda: pre.add("c", 5), lambda: base.get("pre/c"), lambda: pre.add("c", -7),
                 lambda: pre.compare_set("a", "v", "w"), lambda: pre.compare_set("a", "v", "z"),
                 lambda: pre.compare_set("new", "", "n"), lambda: base.get("pre/new"),
                 lambda: pre.check(["a", "c"]), lambda: pre.check(["x"]), lambda: inner.set("k", "1"),
                 lambda: base.check(["pre/q/k"]), lambda: inner.get("k"), lambda: pre.delete_key("a"),
                 lambda: pre.delete_key("a"), lambda: base.num_keys(), lambda: inner.num_keys(),
                 lambda: pre.underlying_store is base, lambda: inner.underlying_store is pre, lambda: pre.timeout,
                 lambda: pre.wait(["missing"], timedelta(milliseconds=30)),
                 lambda: pre.set("t", 5), lambda: m.PrefixStore("p", 5), lambda: m.PrefixStore(3, base)):
        try:
            out.append(("ok", call()))
        except Exception as err:  # noqa: BLE001  (the type is what is compared)
            out.append((type(err).__name__, str(err).splitlines()[0][:30] if type(err).__name__ != "TypeError"
                        else "TypeError"))
    return out


def test_prefix_store_is_pytorchs():
    ours, theirs = session(dist), session(tdist)
    assert ours == theirs, [(i, o, t) for i, (o, t) in enumerate(zip(ours, theirs)) if o != t]


def test_debug_level_is_pytorchs(monkeypatch):
    monkeypatch.setattr(debug_level, "_level", [None])
    assert [level.name for level in dist.DebugLevel.__members__.values()] == list(tdist.DebugLevel.__members__)
    assert [int(level) for level in dist.DebugLevel.__members__.values()] == \
        [int(level) for level in tdist.DebugLevel.__members__.values()]
    assert str(dist.DebugLevel.DETAIL) == str(tdist.DebugLevel.DETAIL) == "DebugLevel.DETAIL"
    before = tdist.get_debug_level()
    try:
        for level in ("INFO", "DETAIL", "OFF"):
            dist.set_debug_level(getattr(dist.DebugLevel, level))
            tdist.set_debug_level(getattr(tdist.DebugLevel, level))
            assert dist.get_debug_level().name == tdist.get_debug_level().name == level
        for bad in (2, "DETAIL"):
            with pytest.raises(TypeError) as theirs:
                tdist.set_debug_level(bad)
            with pytest.raises(TypeError, match="incompatible function arguments"):
                dist.set_debug_level(bad)
            assert "incompatible function arguments" in str(theirs.value)
        for value, level in (("detail", "DETAIL"), ("Info", "INFO"), ("OFF", "OFF")):
            monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", value)
            dist.set_debug_level_from_env()
            tdist.set_debug_level_from_env()
            assert dist.get_debug_level().name == tdist.get_debug_level().name == level
        monkeypatch.setenv("TORCH_DISTRIBUTED_DEBUG", "verbose")
        with pytest.raises(ValueError) as theirs:
            tdist.set_debug_level_from_env()
        with pytest.raises(ValueError) as ours:
            dist.set_debug_level_from_env()
        assert str(ours.value) == str(theirs.value)
    finally:
        tdist.set_debug_level(before)


def test_debug_level_starts_from_the_environment():
    code = "import {m}.distributed as d; print(d.get_debug_level())"
    env = {**os.environ, "PYTHONPATH": ROOT, "TORCH_DISTRIBUTED_DEBUG": "INFO"}
    printed = [subprocess.run([sys.executable, "-c", code.format(m=m)], env=env, capture_output=True, text=True,
                              timeout=120).stdout.strip() for m in ("ember", "torch")]
    assert printed == ["DebugLevel.INFO"] * 2, printed


@pytest.mark.parametrize("name", ["TCPStore", "FileStore"])
def test_stores_shared_between_processes_say_why_not_and_what_instead(name):
    assert hasattr(tdist, name)
    with pytest.raises(ember.MissingFeatureError) as info:
        getattr(dist, name)
    words = str(info.value)
    assert f"torch.distributed.{name} is not implemented in ember" in words
    assert "MPI" in words and "init_process_group() without store=" in words and "HashStore" in words
