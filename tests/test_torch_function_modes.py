"""torch.overrides.TorchFunctionMode: entered as a context manager, it sees the tensor factories and the
torch.nn.init functions PyTorch dispatches to it (as PyTorch's: the same calls, types and keywords), and
Lightning's ``Trainer.init_module()`` (an ``_EmptyInit`` mode) runs."""

import threading

import pytest
import torch
from test_compat import run_script

import ember

SHOWN_MODULES = {"torch": "torch", "torch.nn.init": "nn.init", "ember": "torch", "ember._creation": "torch",
                 "ember.nn.init": "nn.init"}


def recording_mode(lib, records):
    class Recording(lib.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            module = SHOWN_MODULES.get(getattr(func, "__module__", None))
            if module is not None:  # (PyTorch also shows its Tensor methods and internals; ember does not)
                records.append((module, func.__name__, [t.__name__ for t in types], len(args), sorted(kwargs or {})))
            return func(*args, **(kwargs or {}))

    return Recording()


def program(lib):
    x = lib.empty(2, 3)
    lib.nn.init.uniform_(x, -1, 1)
    lib.nn.init.xavier_uniform_(x)  # (PyTorch's calls Tensor.uniform_, not nn.init.uniform_: not shown)
    lib.nn.init.kaiming_normal_(x)
    lib.nn.init.normal_(x, std=0.1)
    lib.nn.init.constant_(x, 0.5)
    lib.zeros(2, dtype=lib.float64)
    lib.full((2,), 3.0)
    lib.ones_like(x)
    weight = lib.nn.Parameter(lib.randn(2, 2))
    lib.nn.init.kaiming_uniform_(weight, a=1)
    return x


def test_a_mode_sees_the_factories_and_init_functions_as_pytorchs():
    records = {}
    for lib in (ember, torch):
        records[lib] = []
        with recording_mode(lib, records[lib]) as mode:
            assert isinstance(mode, lib.overrides.TorchFunctionMode)
            out = program(lib)
        assert out.tolist() == [[0.5] * 3] * 2
    assert records[ember] == records[torch]
    assert [r[1] for r in records[ember]] == ["empty", "uniform_", "normal_", "constant_", "zeros", "full",
                                              "ones_like", "randn", "kaiming_uniform_"]
    # after the block, nothing is dispatched
    mode = recording_mode(ember, records[ember])
    with mode:
        pass
    program(ember)
    assert len(records[ember]) == len(records[torch])


def skipping_init(lib):
    class EmptyInit(lib.overrides.TorchFunctionMode):  # Lightning's _EmptyInit, enabled
        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func.__module__ in ("torch.nn.init", "ember.nn.init"):
                return kwargs["tensor"] if "tensor" in kwargs else args[0]
            return func(*args, **kwargs)

    return EmptyInit()


def test_a_mode_replaces_what_it_handles():
    for lib in (ember, torch):
        x = lib.zeros(3)
        with skipping_init(lib):
            assert lib.nn.init.uniform_(x, 2, 3) is x and lib.nn.init.constant_(x, 7.0) is x
        assert x.tolist() == [0.0, 0.0, 0.0]
        assert lib.nn.init.constant_(x, 7.0).tolist() == [7.0] * 3


@pytest.mark.parametrize("lib", [ember, torch], ids=["ember", "torch"])
def test_modes_nest_and_a_handler_runs_with_its_mode_off(lib):
    order = []

    class Tag(lib.overrides.TorchFunctionMode):
        def __init__(self, name):
            super().__init__()
            self.name = name

        def __torch_function__(self, func, types, args=(), kwargs=None):
            if getattr(func, "__name__", None) == "zeros":
                order.append(self.name)
            return func(*args, **(kwargs or {}))

    with Tag("outer"), Tag("inner"):
        lib.zeros(1)
    with Tag("only"):
        pass
    lib.zeros(1)
    assert order == ["inner", "outer"]


def test_modes_are_per_thread():
    seen = []

    class Recording(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(func.__name__)
            return func(*args, **(kwargs or {}))

    with Recording():
        worker = threading.Thread(target=lambda: ember.zeros(2))
        worker.start()
        worker.join()
        ember.ones(2)
    assert seen == ["ones"]


def test_not_implemented_from_the_mode_is_a_type_error():
    class Refusing(ember.overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    with Refusing(), pytest.raises(TypeError, match="no implementation found for"):
        ember.empty(2)


def test_lightning_trainer_init_module_runs(tmp_path):
    pytest.importorskip("lightning")
    out = run_script(tmp_path, """
        import torch
        import lightning as L

        class Model(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(4, 2)

            def training_step(self, batch, batch_idx):
                x, y = batch
                return torch.nn.functional.cross_entropy(self.layer(x), y)

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

        trainer = L.Trainer(max_epochs=1, accelerator="cpu", logger=False, enable_checkpointing=False,
                            enable_progress_bar=False, enable_model_summary=False)
        with trainer.init_module():
            model = Model()
        with trainer.init_module(empty_init=True):
            empty = Model()
        empty.load_state_dict(model.state_dict())
        torch.manual_seed(0)
        data = torch.utils.data.TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
        trainer.fit(model, torch.utils.data.DataLoader(data, batch_size=8))
        print(trainer.global_step, model.layer.weight.dtype, torch.equal(empty.layer.bias, empty.layer.bias))
    """, timeout=240)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split()[-3:] == ["2", "torch.float32", "True"]


def test_dispatched_functions_keep_their_names_and_signatures():
    import inspect
    import pickle

    for name in ember.overrides.MODE_FACTORIES:
        fn = getattr(ember, name)
        assert pickle.loads(pickle.dumps(fn)) is fn and fn.__name__ == name
    assert pickle.loads(pickle.dumps(ember.nn.init.uniform_)) is ember.nn.init.uniform_
    assert list(inspect.signature(ember.nn.init.kaiming_uniform_).parameters) == \
        list(inspect.signature(torch.nn.init.kaiming_uniform_).parameters)


def test_a_call_without_keywords_hands_the_mode_kwargs_none_as_pytorchs():
    """PyTorch hands ``kwargs=None`` for a call with no keyword (a mode testing ``kwargs is None`` or calling
    ``kwargs.get`` behaves the same under both) and the keywords' dict otherwise; an init function's arguments
    always come as keywords."""
    def seen(lib):
        got = []

        class Recording(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                got.append((func.__name__, None if kwargs is None else sorted(kwargs)))
                return func(*args, **(kwargs or {}))

        with Recording():
            lib.ones(2)
            lib.zeros(2, dtype=lib.float64)
            lib.nn.init.constant_(lib.empty(2), 1.0)
        return got

    assert seen(ember) == seen(torch)
