"""The training-step trace: Chrome trace JSON structure, what is recorded and in which order,
merging per-rank files, and the PNG timeline."""

import json

import pytest

import ember
import ember.nn as nn
from ember.diagnostics import trace

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 2)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


def one_step(hook=False):
    ember.manual_seed(0)
    model = Net()
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    if hook:
        model.fc1.weight.register_post_accumulate_grad_hook(lambda p: None)
    x, y = ember.randn(16, 4), ember.randn(16, 2)
    with trace.record() as tr:
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    return tr


def test_a_step_records_forward_backward_clip_and_step_in_order():
    tr = one_step()
    forward = tr.spans("forward")
    assert [e["name"] for e in forward] == ["Net", "fc1 (Linear)", "act (ReLU)", "fc2 (Linear)"]
    net = forward[0]
    assert all(net["ts"] <= e["ts"] and e["ts"] + e["dur"] <= net["ts"] + net["dur"] for e in forward[1:])
    nodes = tr.spans("backward")
    names = [e["name"] for e in nodes]
    assert names.count("AccumulateGrad") == 4 and names.count("AddmmBackward0") == 2 and "ReluBackward0" in names
    assert names.index("ReluBackward0") < names.index("AddmmBackward0", 2)  # fc2's node, relu's, then fc1's
    whole = tr.spans("autograd", "backward")
    assert len(whole) == 1
    start, end = whole[0]["ts"], whole[0]["ts"] + whole[0]["dur"]
    assert all(start <= e["ts"] and e["ts"] + e["dur"] <= end for e in nodes)
    optim = [e["name"] for e in tr.spans("optim")]
    assert optim == ["SGD.zero_grad", "clip_grad_norm_", "SGD.step"]
    order = [tr.spans("optim", "SGD.zero_grad")[0], net, whole[0], tr.spans("optim", "clip_grad_norm_")[0],
             tr.spans("optim", "SGD.step")[0]]
    assert all(a["ts"] + a["dur"] <= b["ts"] for a, b in zip(order, order[1:]))


def test_post_accumulate_hooks_are_a_span_inside_accumulate_grad():
    tr = one_step(hook=True)
    hooks = tr.spans("hooks")
    assert len(hooks) == 1
    accs = [e for e in tr.spans("backward", "AccumulateGrad")
            if e["ts"] <= hooks[0]["ts"] and hooks[0]["ts"] + hooks[0]["dur"] <= e["ts"] + e["dur"]]
    assert len(accs) == 1


def test_saved_json_is_a_valid_chrome_trace(tmp_path):
    tr = one_step()
    path = tmp_path / "step.json"
    tr.save(str(path))
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert data["displayTimeUnit"] == "ms" and data["otherData"]["rank"] is None
    meta = [e for e in events if e["ph"] == "M"]
    assert meta and all(e["name"] == "thread_name" and isinstance(e["args"]["name"], str) for e in meta)
    timed = [e for e in events if e["ph"] != "M"]
    assert len(timed) == len(tr.events) > 10
    for e in timed:
        assert e["ph"] in ("X", "i")
        assert isinstance(e["ts"], float) and e["ts"] >= 0
        assert isinstance(e["pid"], int) and isinstance(e["tid"], int)
        assert isinstance(e["name"], str) and isinstance(e["cat"], str) and isinstance(e["args"], dict)
        if e["ph"] == "X":
            assert e["dur"] >= 0
    assert {e["tid"] for e in timed} <= {e["tid"] for e in meta}
    assert trace.load(str(path))["traceEvents"] == events


def test_nothing_is_recorded_outside_record():
    with trace.record() as tr:
        pass
    model = Net()
    nn.functional.mse_loss(model(ember.randn(2, 4)), ember.randn(2, 2)).backward()
    assert tr.events == [] and not trace.is_recording()


def test_span_instant_and_nested_recordings():
    with trace.record() as outer:
        with trace.span("outer-work", "user", size=3):
            pass
        with trace.record() as inner:
            trace.instant("mark", "user")
        trace.finish("manual", "user", trace.start())
    assert [e["name"] for e in outer.spans("user")] == ["outer-work", "manual"]
    assert outer.spans("user", "outer-work")[0]["args"] == {"size": 3}
    assert [(e["name"], e["ph"]) for e in inner.events] == [("mark", "i")]
    assert trace.start() is None


def test_merge_puts_each_rank_in_its_own_process(tmp_path):
    paths = []
    for rank in range(2):
        tr = one_step()
        paths.append(str(tmp_path / f"trace_rank{rank}.json"))
        tr.save(paths[-1], rank=rank)
    merged = trace.merge(paths, str(tmp_path / "merged.json"))
    on_disk = json.loads((tmp_path / "merged.json").read_text())
    assert on_disk == merged
    timed = [e for e in merged["traceEvents"] if e["ph"] != "M"]
    assert {e["pid"] for e in timed} == {0, 1}
    names = {e["pid"]: e["args"]["name"] for e in merged["traceEvents"] if e["name"] == "process_name"}
    assert names == {0: "rank 0", 1: "rank 1"}
    first = min(e["ts"] for e in timed if e["pid"] == 0)
    second = min(e["ts"] for e in timed if e["pid"] == 1)
    assert second > first  # rank 1's file was recorded later: shifted onto the common clock


def test_merge_errors(tmp_path):
    with pytest.raises(ValueError, match="at least one"):
        trace.merge([])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"events": []}))
    with pytest.raises(ValueError, match="not a Chrome trace"):
        trace.merge([str(bad)])


def test_render_png_from_a_trace_and_from_a_file(tmp_path):
    tr = one_step(hook=True)
    png = tmp_path / "step.png"
    trace.render_png(tr, str(png))
    assert png.read_bytes()[:8] == PNG_SIGNATURE and png.stat().st_size > 5000
    tr.save(str(tmp_path / "step.json"), rank=0)
    trace.merge([str(tmp_path / "step.json")] * 2, str(tmp_path / "merged.json"))
    trace.render_png(str(tmp_path / "merged.json"), str(tmp_path / "merged.png"), title="two ranks")
    assert (tmp_path / "merged.png").read_bytes()[:8] == PNG_SIGNATURE


def test_render_png_of_an_empty_trace_says_so(tmp_path):
    with trace.record() as tr:
        pass
    with pytest.raises(ValueError, match="no events"):
        trace.render_png(tr, str(tmp_path / "x.png"))


@pytest.mark.parametrize("form", ["grad", "backward_inputs", "backward"])
def test_each_node_that_runs_is_a_span_whatever_the_backward_form(form):
    """autograd.grad and backward(inputs=...) run only the nodes that lead to the inputs (the engine's pruned
    path): each of those is a span, as each node of a plain backward is; what they skip is none."""
    x = ember.randn(3, requires_grad=True)
    w = ember.randn(3, requires_grad=True)
    with trace.record() as tr:
        loss = ((x * 2).exp() * w).sum()
        if form == "grad":
            ember.autograd.grad(loss, [x])
        elif form == "backward_inputs":
            loss.backward(inputs=[x])
        else:
            loss.backward()
    names = [e["name"] for e in tr.spans("backward")]
    formulas = sorted(n for n in names if n != "AccumulateGrad")
    assert formulas == ["ExpBackward0", "MulBackward0", "MulBackward0", "SumBackward0"]
    # w's accumulator runs only in the plain backward (x's, under inputs=, accumulates after the walk)
    assert names.count("AccumulateGrad") == {"grad": 0, "backward_inputs": 0, "backward": 2}[form]
    assert len(tr.spans("autograd", "backward")) == 1
