"""What each rank runs under ``ember.distributed.run``: PyTorch's rank variables, the script, failure reports.

    (rank supervisor, _agent.py) -> python -m ember.distributed._bootstrap [-m module | script.py] args...

A PyTorch script runs on ember (``-m ember.compat`` is put in front of it) where PyTorch is not installed, so
``ember.distributed.run train.py`` runs an unmodified torch script as torchrun would; where PyTorch is installed,
``import torch`` in the script means PyTorch unless the launcher itself ran under ``python -m ember.compat``
(then the launcher asks for ember explicitly: ``run.rank_target``).

It sets RANK/WORLD_SIZE/LOCAL_RANK/LOCAL_WORLD_SIZE (and torchrun's other variables)
from the MPI launcher's own variables where unset, runs the script as ``__main__``,
and on an exception or a non-zero exit reports the failure and aborts the MPI job
(``_errors.py``). A script that returns leaves a ``done`` record, so the launcher can
tell it from a rank that vanished (``os._exit``, a signal).
"""

from __future__ import annotations

import importlib.util
import os
import runpy
import sys

from . import _env, _errors


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)  # sys.exit("message"), as the interpreter would
    return 1


COMPAT = ["-m", "ember.compat"]


def on_ember(target: list[str]) -> list[str]:
    """``target`` (``script args`` or ``-m module args``) run by the compat runner, unless it already is."""
    return target if target[:2] == COMPAT else [*COMPAT, *target]


def main(argv: list[str]) -> int:
    _env.export_torch_env()
    if importlib.util.find_spec("torch") is None:
        argv = on_ember(argv)
    rank = int(os.environ.get("RANK", "0"))
    as_module = argv[0] == "-m"
    target, args = (argv[1], argv[2:]) if as_module else (argv[0], argv[1:])
    sys.argv = [target, *args]
    try:
        if as_module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path[0] = os.path.dirname(os.path.abspath(target))  # as `python script.py` would
            runpy.run_path(target, run_name="__main__")
    except SystemExit as stop:
        code = _exit_code(stop.code)
        if code:
            _errors.report_exit(rank, code)
            return code
    except KeyboardInterrupt:
        _errors.report_interrupt(rank)
    except BaseException as exc:  # noqa: BLE001  (the job must stop either way)
        _errors.report_failure(rank, exc)
        return 1
    _errors.record_done(rank)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
