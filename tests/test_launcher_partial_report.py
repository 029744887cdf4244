"""A failing rank's report that mpiexec forwarded only in part before the job stopped: the launcher prints the rest
of it from the rank's record, so the report reads once, whole (a loaded machine showed its first line twice)."""

from ember.distributed._job import unshown_rest

REPORT = ("[ember rank 1] Traceback (most recent call last):\n"
          '[ember rank 1]   File "train.py", line 4, in <module>\n'
          "[ember rank 1]     raise ValueError('bad batch')\n"
          "[ember rank 1] ValueError: bad batch\n")


def test_a_report_forwarded_up_to_a_line_gets_only_its_remaining_lines():
    first = REPORT.split("\n", 1)[0] + "\n"
    tail = b"epoch 0 loss 1.0\n" + first.encode()
    shown = tail.decode() + unshown_rest(tail, REPORT)
    assert shown == "epoch 0 loss 1.0\n" + REPORT


def test_a_report_cut_inside_a_line_is_continued_from_that_byte():
    for cut in (1, 5, 40, len(REPORT) - 1):
        tail = b"some output\n" + REPORT[:cut].encode()
        assert tail.decode() + unshown_rest(tail, REPORT) == "some output\n" + REPORT, cut


def test_a_whole_report_is_not_printed_again_and_an_unforwarded_one_is_printed_whole():
    assert unshown_rest(b"x\n" + REPORT.encode() + b"launcher line\n", REPORT) == ""
    assert unshown_rest(b"epoch 0 loss 1.0\n", REPORT) == REPORT
    assert unshown_rest(b"", REPORT) == REPORT
