"""grad(y, x) beyond the arithmetic, on every backend: placed errors and limits, lets built
again keeping their random draws, non-finite values located, the docs' examples and a data
set with an override, against torch written here."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from backend_helpers import load
from grad_helpers import close, grad, run, t64

from gradcli import runner

# ----- errors, placed -----
HEAD = """inputs:
  x: [1.0, 2.0]
  k: {value: [1, 2], dtype: int64}
"""


@pytest.mark.parametrize("body, where, words", [
    ("outputs:\n  y: sum(grad(cast(x, int64), x))\n", "spec.yaml:5:15", "y is int64"),
    ("let:\n  z: x * 2\noutputs:\n  y: sum(grad(sum(z), x * 2))\n", "spec.yaml:7:25",
     "grad's x must be the name of an input or a let"),
    ("let:\n  a: x * 2\n  b: exp(k)\noutputs:\n  y: sum(grad(sum(b), a))\n", "spec.yaml:8:23",
     "y does not depend on 'a'"),
    ("outputs:\n  y: sum(grad(sum(x), k))\n", "spec.yaml:5:23", "input 'k' is int64"),
    ("functions:\n  f:\n    args: [a]\n    forward: grad(a * a, a)\n    gradient: dy\n"
     "outputs:\n  y: sum(f(x))\n",
     "spec.yaml:7:14", "grad(y, x) can only be used in the spec's let and outputs"),
    ("outputs:\n  y: sum(grad(x))\n", "spec.yaml:5:10", "missing the argument 'x'"),
    ("outputs:\n  y: sum(x)\n  z: grad(y, x)\n", "spec.yaml:6:11", "'y' is an output"),
    ("inputs:\n  grad: 1.0\n", None, "'grad' is grad(y, x)"),
    ("let:\n  h: tanh(x)\noutputs:\n  y: sum(grad(sum(h ** 3), x))\nwrt: [x, h]\n",
     "spec.yaml:8:10", "'h' lies between x and y of a grad(y, x)"),
    ("let:\n  h: tanh(x)\noutputs:\n  y: sum(grad(sum(h ** 3), x))\nstop_gradients: [h]\n",
     "spec.yaml:8:18", "'h' lies between x and y of a grad(y, x)"),
])
def test_errors_are_placed(body, where, words):
    text = HEAD + body if not body.startswith("inputs") else body + "outputs:\n  y: grad\n"
    with pytest.raises(Exception) as info:
        runner.run(load(text), backend="numpy")
    message = str(info.value)
    assert words in message, message
    if where is not None:
        assert message.startswith(where), message


# ----- lets built again for grad() keep their random draws -----
DRAWS = """
inputs:
  x: [0.5, -1.0, 2.0]
let:
  n: x * uniform([3], 0.5, 1.5)
  m: n * normal([3])
  g: grad(sum(m), x)
  later: uniform([2])
outputs:
  y: sum(g * x)
"""


def test_lets_built_again_keep_their_draws(backend):
    result = run(DRAWS, backend, numeric=False)
    values = result.values
    # m = x * u * n, so d(sum m)/dx = u * n = m / x: the same draws, not new ones
    close(values["g"] * np.array([0.5, -1.0, 2.0]), values["m"])
    without = run(DRAWS.replace("  g: grad(sum(m), x)\n", "").replace("sum(g * x)", "sum(m)"),
                  backend, numeric=False)
    close(values["later"], without.values["later"])  # the draws after it are not shifted
    close(result.gradients["y"]["x"].overridden, values["g"])


# ----- a non-finite gradient value says where it was born -----
NONFINITE = """
inputs:
  x: [0.0, 1.0, 4.0]
let:
  g: grad(sum(sqrt(x)), x)
outputs:
  y: sum(g * x)
"""


def test_a_nonfinite_grad_value_is_located(backend):
    result = run(NONFINITE, backend, numeric=False)
    assert np.isposinf(result.values["g"][0]) and np.isnan(result.values["y"])
    close(result.values["g"][1:], 0.5 / np.sqrt([1.0, 4.0]))
    found = [r for r in result.nonfinite if r.phase == "forward" and r.tensor == "g"]
    assert len(found) == 1 and found[0].born == "inf", result.nonfinite
    # the core names the op of the inner gradient, a framework the grad() call around it
    assert found[0].location.startswith("spec.yaml:5:"), found[0]
    assert found[0].expr in ("sqrt(x)", "grad(sum(sqrt(x)), x)"), found[0]


# ----- the bundled experiment's expected numbers are torch's -----
def test_bundled_hvp_experiment_expects_torchs_numbers():
    from pathlib import Path

    from gradcli.spec import load_spec
    path = Path(__file__).parents[2] / "experiments" / "hessian_vector_product.yaml"
    experiment = load_spec(str(path))
    x = t64(experiment.inputs["x"].value)
    a = t64(experiment.inputs["a"].value, grad=False)
    v = t64(experiment.inputs["v"].value, grad=False)

    def y_of(x_):
        return (torch.tanh(a @ x_) ** 2).sum() + (x_ ** 4).sum() / 4

    hessian = torch.autograd.functional.hessian(y_of, x.detach())
    hvp = grad((grad(y_of(x), x) * v).sum(), x)
    (third,) = torch.autograd.grad(hvp.sum(), x)
    expect = experiment.expect
    close(expect.values["hvp"], hessian @ v)
    close(expect.values["hvp"], hvp.detach())
    close(expect.values["g"], grad(y_of(x), x).detach())
    close(expect.gradients["hvp"]["x"], third)
    assert runner.run(experiment, backend="numpy").expect.passed


def test_grad_order_and_calls_are_bounded():
    lets = "".join(f"  g{i}: grad(sum(g{i - 1} ** 2), x)\n" for i in range(1, 5))
    text = HEAD + "let:\n  g0: x ** 3\n" + lets + "outputs:\n  y: sum(g4)\n"
    runner.run(load(text), backend="numpy", numeric=False)  # order 4: allowed
    deeper = text.replace("  y: sum(g4)", "  y: sum(grad(sum(g4), x))")
    with pytest.raises(Exception, match="order 5 .*the limit is 4") as info:
        load(deeper)
    assert str(info.value).startswith("spec.yaml:11:15"), str(info.value)
    many = HEAD + "outputs:\n" + "".join(f"  y{i}: grad(x * {i}, x)\n" for i in range(65))
    with pytest.raises(Exception, match="at most 64 times"):
        load(many)


# ----- the examples of docs/spec.md's grad() section run, with the numbers torch gives -----
def _doc_examples() -> list[str]:
    from pathlib import Path
    text = (Path(__file__).parents[2] / "docs" / "spec.md").read_text()
    section = text[text.index("## Gradients as values"):text.index("## Training\n")]
    return [block.split("```", 1)[0] for block in section.split("```yaml\n")[1:]]


def test_doc_examples_run(backend):
    hvp_spec, train_spec, swish_spec = _doc_examples()
    hvp = run(hvp_spec, backend, numeric=False)
    close(hvp.values["hvp"], [-1.0676413048433786, -7.653957846099831, 0.4669789230499156])
    trained = run(train_spec, backend, numeric=False)
    assert trained.train.loss[-1] < trained.train.loss[0]
    swish = run(swish_spec, backend, numeric=False)
    x = t64([-1.5, 0.2, 2.0])
    s = torch.sigmoid(x)
    (curvature,) = torch.autograd.grad((s + x * s * (1 - s)).sum(), x)  # d/dx of the gradient
    close(swish.values["curvature"], curvature)
    close(swish.gradients["y"]["x"].overridden, (s + x * s * (1 - s)).detach())


# ----- with a data set and an override: a penalty on the features' gradient -----
ROWS = [[0.5, -1.0, 0], [1.5, 0.2, 1], [-0.3, 0.8, 0], [1.0, 1.0, 1], [-1.2, 0.4, 0]]
DATA_SPEC = """
data: {load: rows.csv, features: X, labels: y}
inputs:
  w: [0.5, -0.25]
  b: 0.1
override_map:
  round: identity
let:
  z: matmul(X, round(w * 4) / 4) + b
  slope: grad(sum(sigmoid(z)), X)
outputs:
  loss: mean(softplus(z) - cast(y, dtype(z)) * z) + 0.25 * mean(sum(slope ** 2, axis=1))
"""


def test_penalty_on_data_features_through_an_override(backend, tmp_path):
    (tmp_path / "rows.csv").write_text("x1,x2,label\n" + "".join(
        f"{a},{b},{c}\n" for a, b, c in ROWS))
    (tmp_path / "gp.yaml").write_text(DATA_SPEC)
    from gradcli.spec import load_spec
    result = runner.run(load_spec(str(tmp_path / "gp.yaml")), backend=backend, numeric=False)

    class RoundSTE(torch.autograd.Function):  # round forward, identity backward
        @staticmethod
        def forward(ctx, v):
            return torch.round(v)

        @staticmethod
        def backward(ctx, g):
            return g

    x = t64([r[:2] for r in ROWS])  # every row is in the first batch: means do not see order
    labels = t64([r[2] for r in ROWS], grad=False)
    w, b = t64([0.5, -0.25]), t64(0.1)
    z = x @ (RoundSTE.apply(w * 4) / 4) + b
    slope = grad(torch.sigmoid(z), x)
    loss = (torch.nn.functional.softplus(z) - labels * z).mean() \
        + 0.25 * slope.pow(2).sum(dim=1).mean()
    dw, db = torch.autograd.grad(loss, [w, b])
    close(result.values["loss"], loss.detach())
    close(result.gradients["loss"]["w"].overridden, dw)
    close(result.gradients["loss"]["b"].overridden, db)


# ----- training on batches with a gradient penalty on the features -----
BATCHED = DATA_SPEC.replace("override_map:\n  round: identity\n", "").replace(
    "round(w * 4) / 4", "w") + """train:
  loss: loss
  optimizer: {name: sgd, lr: 0.125}
  batch_size: 2
  epochs: 2
"""


def test_training_on_batches_with_a_penalty(backend, tmp_path):
    from gradcli.data import batches, prepare
    from gradcli.spec import load_spec
    (tmp_path / "rows.csv").write_text("x1,x2,label\n" + "".join(
        f"{a},{b},{c}\n" for a, b, c in ROWS))
    (tmp_path / "gp.yaml").write_text(BATCHED)
    experiment = load_spec(str(tmp_path / "gp.yaml"))
    result = runner.run(experiment, backend=backend, numeric=False)
    parts = prepare(experiment.data, experiment.seed, "float64")  # the rows, in gradcli's order
    w, b = t64([0.5, -0.25]), t64(0.1)
    losses = []
    for epoch in range(2):
        for xb, yb in batches(parts, 2, experiment.seed, epoch):
            x = t64(np.array(xb))
            labels = torch.tensor(np.array(yb), dtype=torch.float64)
            z = x @ w + b
            slope = grad(torch.sigmoid(z), x)
            loss = (torch.nn.functional.softplus(z) - labels * z).mean() \
                + 0.25 * slope.pow(2).sum(dim=1).mean()
            losses.append(loss.item())
            dw, db = torch.autograd.grad(loss, [w, b])
            with torch.no_grad():
                w -= 0.125 * dw
                b -= 0.125 * db
    close(result.train.loss, losses)
    close(result.train.final["w"], w.detach())
    close(result.train.final["b"], b.detach())
