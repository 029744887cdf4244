"""Ordinary pytest tests that run on every rank of a job (tests/test_on_ranks.py launches them).

``python -m ember.distributed.run --nproc-per-node N -m pytest -p rank_plugin tests/ranks/rank_<family>.py`` (with
tests/ranks on PYTHONPATH) runs the same tests in the same order on each rank, so the collectives inside them pair
up. A plugin rather than a conftest.py: a second conftest module would shadow tests/conftest.py's imports. The ``process_group`` fixture initialises
ember.distributed once per rank; with ``RANK_RESULTS_DIR`` set, each rank writes one line per test to
``rank<r>.txt`` there (``<nodeid> <outcome>``), which the launching test reads. The files are named ``rank_*.py``,
so a plain ``pytest tests`` does not collect them: outside a launched job there are no ranks.
"""

import os

import pytest


@pytest.fixture(scope="session")
def process_group():
    import ember.distributed as dist

    dist.init_process_group("mpi")
    yield dist
    dist.destroy_process_group()


@pytest.fixture
def rank(process_group) -> int:
    return process_group.get_rank()


@pytest.fixture
def world(process_group) -> int:
    return process_group.get_world_size()


def pytest_runtest_logreport(report):
    directory = os.environ.get("RANK_RESULTS_DIR")
    if directory and (report.when == "call" or report.outcome != "passed"):
        with open(os.path.join(directory, f"rank{os.environ['RANK']}.txt"), "a") as f:
            f.write(f"{report.nodeid.split('::')[-1]} {report.when} {report.outcome}\n")
