"""The launcher's watch loop once every script has ended but a rank is still in its teardown.

A rank that ends with ``os._exit(0)`` never finalises MPI; a rank already in MPI's finalisation can then wait
for it forever (seen once in CI under load: the job ran into its --timeout and exited 124 although every script
had finished). The watch loop is driven here with the records the ranks would write and a job that never ends.
"""

import types

import pytest

from ember.distributed import _outcome, _records, run


class _NeverEndingJob:
    def __init__(self, run_dir: str, running: list[int]) -> None:
        self.run_dir, self.running = run_dir, running

    def ended(self) -> bool:
        return False

    def running_ranks(self) -> list[int]:
        return self.running

    def exit_record(self, rank: int):
        return _records.read(self.run_dir, rank, "exit")

    def note_proxy_files(self) -> None:
        pass

    def wait(self, seconds: float) -> None:
        pass


def _record(run_dir, rank, kind, text, monkeypatch):
    monkeypatch.setenv(_records.RUN_DIR_VAR, str(run_dir))
    assert _records.write(rank, kind, text)


def _watch(job, seconds):
    args = types.SimpleNamespace(no_python=False, monitor_interval=0.02)
    signals = types.SimpleNamespace(received=[])
    return run._watch(job, args, 2, run.time.monotonic() + seconds, signals)


def test_ranks_left_in_teardown_after_a_rank_ended_with_os_exit_0_end_the_job_as_a_success(tmp_path, monkeypatch):
    _record(tmp_path, 1, "done", "1.0", monkeypatch)  # rank 1's script returned; it is still in its teardown
    _record(tmp_path, 1, "finalizing", "1.5", monkeypatch)  # ... in MPI's finalisation
    _record(tmp_path, 0, "exit", "0 2.0", monkeypatch)  # rank 0 ended with 0 without returning (os._exit(0))
    assert _outcome.ended_without_finalising(str(tmp_path), 2) == [0]
    monkeypatch.setattr(run, "_TEARDOWN_GRACE_S", 0.2)
    result = _watch(_NeverEndingJob(str(tmp_path), [1]), seconds=5)
    assert (result.kind, result.returncode) == ("ended", 0)


@pytest.mark.parametrize("records", [
    [(1, "done", "1.0"), (0, "done", "1.5")],  # both returned: a slow teardown of their own is waited for
    [(1, "done", "1.0")],                      # rank 0 still runs its script
    [(1, "done", "1.0"), (0, "exit", "3 2.0")],  # rank 0 failed: not for this rule
    # rank 0 ended with os._exit(0), but rank 1 still works after its script (a non-daemon thread uploading a
    # checkpoint): not in MPI's finalisation yet, so not stopped
    [(1, "done", "1.0"), (0, "exit", "0 2.0")],
])
def test_teardown_is_waited_for_unless_a_rank_ended_without_finalising(tmp_path, monkeypatch, records):
    for rank, kind, text in records:
        _record(tmp_path, rank, kind, text, monkeypatch)
    monkeypatch.setattr(run, "_TEARDOWN_GRACE_S", 0.05)
    running = [r for r in (0, 1) if not any(rank == r and kind == "exit" for rank, kind, _ in records)]
    result = _watch(_NeverEndingJob(str(tmp_path), running), seconds=0.5)
    assert result.kind in ("timeout", "failed"), result.kind
