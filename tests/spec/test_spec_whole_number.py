"""An integer key given a number with a fraction names it: "2.5 is not a whole number", not
"expected an integer, got a number" (tryout12). expect_int is where every integer key
(steps, epochs, batch_size, eval_every, seed, a schedule's steps/every) is read."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from gradcli.cli import cli
from gradcli.errors import SpecError
from gradcli.spec import load_spec

SPEC = ("inputs:\n  w: [1.0, 2.0]\noutputs:\n  loss: sum(w * w)\n"
        "train:\n  optimizer: {name: sgd, lr: 0.1}\n  steps: 2\n")


@pytest.mark.parametrize("setting, said", [
    ("train.steps=2.5", "--set train.steps: 2.5 is not a whole number (expected an integer "
                        "between 1 and 100000)"),
    ("train.steps=1e-3", "--set train.steps: 1e-3 is not a whole number (expected an integer "
                         "between 1 and 100000)"),
    ("train.eval_every=0.5", "--set train.eval_every: 0.5 is not a whole number (expected an "
                             "integer between 1 and 100000)"),
    ("seed=-1.5", "--set seed: -1.5 is not a whole number (expected an integer between 0 and "
                  "18446744073709551615)"),
])
def test_a_fraction_is_not_a_whole_number(tmp_path, setting, said):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC)
    with pytest.raises(SpecError) as caught:
        load_spec(path, overrides=[setting])
    assert str(caught.value) == said


def test_in_the_file_with_its_place_and_a_whole_float_still_counts(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SPEC.replace("steps: 2\n", "steps: 2.5\n"))
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    assert caught.value.bare_message == ("2.5 is not a whole number (expected an integer between "
                                         "1 and 100000)")
    assert (caught.value.line, caught.value.column) == (7, 10)
    path.write_text(SPEC.replace("steps: 2\n", "steps: 2.0\n"))
    assert load_spec(path).train.steps == 2


def test_the_tryouts_command(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("data:\n  load: {dataset: iris}\n  features: X\n  labels: y\ninputs:\n"
                    "  W: {zeros: [4, 3]}\noutputs:\n  loss: mean(sparse_softmax_cross_entropy_"
                    "with_logits(y, X @ W))\ntrain:\n  optimizer: {name: sgd, lr: 0.1}\n"
                    "  epochs: 1\n")
    result = CliRunner().invoke(cli, ["run", str(path), "--set", "train.epochs=2.5"])
    assert result.exit_code == 2
    assert result.stderr == (f"error: {path}: --set train.epochs: 2.5 is not a whole number "
                             "(expected an integer between 1 and 100000)\n")
