"""Spec inputs an attacker (or a typo) controls: overflowing numbers, odd files, huge lines."""
from __future__ import annotations

import os

import numpy as np
import pytest
from fifo_reader import within

from gradcli.errors import SpecError
from gradcli.spec import load_spec, load_spec_text


def error_of(text: str, path: str = "spec.yaml") -> SpecError:
    with pytest.raises(SpecError) as info:
        load_spec_text(text, path=path)
    return info.value


@pytest.mark.parametrize("literal, column", [("1e400", 6), ("[1.0, 1.0e+400]", 12),
                                             ("-1e999", 6), ("[[2, 1E309]]", 11)])
def test_a_decimal_too_large_for_a_float_is_refused_at_its_place(literal, column):
    err = error_of(f"inputs:\n  x: {literal}\noutputs:\n  y: x * 2\n")
    assert (err.path, err.line, err.column) == ("spec.yaml", 2, column)
    assert "too large for a float" in err.bare_message and "inf" in err.bare_message


def test_inf_and_nan_written_as_such_are_still_values():
    exp = load_spec_text("inputs:\n  x: [.inf, -Infinity, nan, 1e308]\noutputs:\n  y: x * 2\n")
    value = exp.inputs["x"].value
    assert value[0] == np.inf and value[1] == -np.inf and np.isnan(value[2])
    assert value[3] == 1e308


def test_a_number_too_large_in_a_hyper_parameter_is_refused():
    err = error_of("inputs: {x: [1.0]}\noutputs: {y: sum(x)}\n"
                   "train: {optimizer: {name: sgd, lr: 1e999}}\n")
    assert err.line == 3 and "too large for a float" in err.bare_message


def _spec_loading(tmp_path, target: str):
    path = tmp_path / "spec.yaml"
    path.write_text(f"inputs:\n  x: {{load: {target}}}\noutputs:\n  y: x * 2\n")
    return path


def test_load_of_a_directory_says_it_is_a_directory(tmp_path):
    (tmp_path / "data.npz").mkdir()
    with pytest.raises(SpecError) as info:
        load_spec(_spec_loading(tmp_path, "data.npz"))
    assert "is a directory" in str(info.value) and "does not exist" not in str(info.value)
    assert (info.value.line, info.value.column) == (2, 13)


def test_load_of_a_fifo_says_so_and_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "data.npz")
    with pytest.raises(SpecError, match=r"named pipe \(FIFO\)"):
        within(20, lambda: load_spec(_spec_loading(tmp_path, "data.npz")))


def test_reading_a_fifo_as_the_spec_never_blocks(tmp_path):
    os.mkfifo(tmp_path / "spec.yaml")
    with pytest.raises(SpecError, match=r"named pipe \(FIFO\)"):
        within(20, lambda: load_spec(tmp_path / "spec.yaml"))


def test_a_yaml_error_on_a_huge_line_shows_a_window_around_the_column():
    numbers = ", ".join(["1.5"] * 150_000)  # a 750 KB line, as a minifier writes
    text = f"inputs: {{x: [{numbers}, ]]}}\noutputs: {{y: x}}\n"
    err = error_of(text)
    shown = str(err)
    assert len(shown) < 400, len(shown)
    source, caret = shown.splitlines()[-2:]
    assert source.strip().startswith("…") and "1.5, ]]}" in source
    # The caret sits under the character at the reported column.
    line = text.splitlines()[0]
    assert source[caret.index("^")] == line[err.column - 1] == "]"


def test_a_long_line_error_inside_a_value_is_windowed_too():
    numbers = ", ".join(["1.5"] * 150_000)
    err = error_of(f"inputs: {{x: [{numbers}, zz]}}\noutputs: {{y: x}}\n")
    source, caret = str(err).splitlines()[-2:]
    assert len(source) < 140 and source.endswith("zz]}") and source[caret.index("^")] == "z"
