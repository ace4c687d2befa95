"""A `$` in a spec's or sweep's name (or a swept value) is text, never matplotlib mathtext:
mathtext could not parse `$\\frac{a$` (an internal error in every figure command) and
recursed without bound on deeply nested braces."""
import warnings

import pytest
from click.testing import CliRunner
from sweep_fixture import write_sweep
from train_spec import write_spec

from gradcli.cli import cli

MATH = r"$\frac{a$"
DEEP = "$" + "{" * 400 + "a" + "}" * 400 + "$"


def spec(tmp_path, name):
    return write_spec(tmp_path / "m.yaml", name)


@pytest.mark.parametrize("name", [MATH, DEEP, "a_b^c $x$ \\ $$ $a$"])
def test_plot_train_draws_a_dollar_name_as_text(tmp_path, name):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # DEEP (802 characters) made the layout give up
        done = CliRunner().invoke(cli, ["plot", "train", str(spec(tmp_path, name)), "--output",
                                        str(tmp_path / "m.svg")])
    assert done.exit_code == 0, done.output
    assert [str(w.message) for w in caught] == []
    assert (tmp_path / "m.svg").stat().st_size > 0


def test_plot_curve_draws_a_dollar_name_as_text(tmp_path):
    done = CliRunner().invoke(cli, ["plot", "curve", str(spec(tmp_path, MATH)), "--output",
                                    str(tmp_path / "c.png")])
    assert done.exit_code == 0, done.output


def test_report_of_a_dollar_name_has_its_figure(tmp_path):
    done = CliRunner().invoke(cli, ["report", str(spec(tmp_path, MATH)), "--output",
                                    str(tmp_path / "r.html")])
    assert done.exit_code == 0, done.output
    page = (tmp_path / "r.html").read_text()
    assert r"<h2>$\frac{a$</h2>" in page and "<img" in page


def test_plot_sweep_of_a_dollar_name_and_value(tmp_path):
    write_sweep(tmp_path / "sw", name=MATH)
    csv = tmp_path / "sw" / "results.csv"
    csv.write_text(csv.read_text().replace("hardtanh", "$\\frac{b$"))  # a legend label too
    done = CliRunner().invoke(cli, ["plot", "sweep", str(tmp_path / "sw"), "--x",
                                    "train.optimizer.lr", "--y", "final_loss", "--hue",
                                    "override_map.sign", "--output", str(tmp_path / "s.png")])
    assert done.exit_code == 0, done.output
