"""ember on real data: an MLP learns scikit-learn's bundled digits (8x8 images, 10 classes, no download).

scikit-learn is a test-only dependency; without it these tests are skipped.
"""

import numpy as np
import pytest
import torch

import ember
import ember.nn as enn
from ember.utils.data import DataLoader, TensorDataset

datasets = pytest.importorskip("sklearn.datasets")
model_selection = pytest.importorskip("sklearn.model_selection")


@pytest.fixture(scope="module")
def digits():
    """Fixed stratified 75/25 split of the 1797 digits, pixels scaled to [0, 1], float32 / int64."""
    x, y = datasets.load_digits(return_X_y=True)
    x = (x / 16.0).astype(np.float32)
    y = y.astype(np.int64)
    return model_selection.train_test_split(x, y, test_size=0.25, random_state=0, stratify=y)


def mlp(nn):
    return nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 64), nn.ReLU(), nn.Linear(64, 10))


def test_mlp_learns_digits(digits):
    x_train, x_test, y_train, y_test = digits
    ember.manual_seed(0)
    model = mlp(enn)
    optimizer = ember.optim.Adam(model.parameters(), lr=3e-3)
    loss_fn = enn.CrossEntropyLoss()
    loader = DataLoader(TensorDataset(ember.from_numpy(x_train), ember.from_numpy(y_train)),
                        batch_size=64, shuffle=True)
    first_epoch_loss = None
    for _ in range(15):
        total = 0.0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(yb)
        epoch_loss = total / len(y_train)
        first_epoch_loss = first_epoch_loss if first_epoch_loss is not None else epoch_loss

    model.eval()
    with ember.no_grad():
        logits = model(ember.from_numpy(x_test))
    accuracy = (logits.argmax(dim=1).numpy() == y_test).mean()
    assert logits.dtype == ember.float32
    assert epoch_loss < first_epoch_loss / 5, (first_epoch_loss, epoch_loss)
    assert accuracy >= 0.95, f"held-out accuracy {accuracy:.3f} < 0.95"


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_training_matches_torch(digits, opt):
    """Same initial weights, same batches: ember's losses and weights follow torch's step by step."""
    x_train, _, y_train, _ = digits
    torch.manual_seed(0)
    t_model = mlp(torch.nn)
    e_model = mlp(enn)
    e_model.load_state_dict({k: ember.tensor(v.detach().numpy()) for k, v in t_model.state_dict().items()})

    def make(m, model):
        if opt == "sgd":
            return m.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        return m.optim.Adam(model.parameters(), lr=3e-3)

    t_opt, e_opt = make(torch, t_model), make(ember, e_model)
    t_loss_fn, e_loss_fn = torch.nn.CrossEntropyLoss(), enn.CrossEntropyLoss()
    # No shuffling, so both frameworks see the same batches in the same order.
    e_loader = DataLoader(TensorDataset(ember.from_numpy(x_train), ember.from_numpy(y_train)), batch_size=64)
    t_loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.from_numpy(x_train), torch.from_numpy(y_train)), batch_size=64)
    t_losses, e_losses = [], []
    for step, ((txb, tyb), (exb, eyb)) in enumerate(zip(t_loader, e_loader)):
        if step == 8:
            break
        np.testing.assert_array_equal(exb.numpy(), txb.numpy())
        for o, model, loss_fn, xb, yb, losses in ((t_opt, t_model, t_loss_fn, txb, tyb, t_losses),
                                                  (e_opt, e_model, e_loss_fn, exb, eyb, e_losses)):
            o.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            o.step()
            losses.append(loss.item())

    assert t_losses[-1] < t_losses[0]  # the comparison is over steps that actually train
    np.testing.assert_allclose(e_losses, t_losses, rtol=1e-4, atol=1e-5)
    t_state = t_model.state_dict()
    for name, value in e_model.state_dict().items():
        assert value.dtype == ember.float32, name
        np.testing.assert_allclose(value.numpy(), t_state[name].numpy(), rtol=1e-3, atol=1e-5, err_msg=name)
