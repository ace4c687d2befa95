"""The `data:` section: loading csv, npz and bundled sets, the first batch as inputs, and every
bad input as a placed SpecError. Expected rows are computed here with numpy, from the files."""
from __future__ import annotations

import os
import sys

import numpy as np
import pytest

from gradcli.errors import SpecError
from gradcli.spec import load_spec
from gradcli.spec import training as spec_training
from gradcli.spec.sections import TRAIN, Section

CSV = "h,kind,w\n1.5,b,10\n2,a,20\n3,a,30\n4.5,c,40\n5,b,50\n6,a,60\n7,c,70\n8,b,80\n"
HEAD = """\
seed: 4
data:
  load: d.csv
  label: kind
  features: X
  labels: y
"""
TAIL = """\
inputs:
  w: [1.0, -1.0]
outputs:
  loss: sum(matmul(X, w)) + sum(cast(y, dtype(w)))
"""


@pytest.fixture
def batch_size_key(monkeypatch):
    """train.batch_size is train10's key; until it is declared there, let the loader take it."""
    if "batch_size" not in TRAIN.keys:
        monkeypatch.setattr(spec_training, "TRAIN", Section("train", (*TRAIN.keys, "batch_size"),
                                                            TRAIN.required))


def write(tmp_path, text, csv=CSV, name="spec.yaml"):
    if csv is not None:
        (tmp_path / "d.csv").write_text(csv)
    path = tmp_path / name
    path.write_text(text)
    return path


def error(tmp_path, text, csv=CSV) -> SpecError:
    path = write(tmp_path, text, csv)
    with pytest.raises(SpecError) as info:
        load_spec(path)
    return info.value


def csv_rows():
    """CSV by hand: features h, w in file order; labels a, b, c -> 0, 1, 2."""
    lines = [line.split(",") for line in CSV.splitlines()[1:]]
    x = np.array([[float(h), float(w)] for h, _, w in lines])
    y = np.array([{"a": 0, "b": 1, "c": 2}[k] for _, k, _ in lines])
    return x, y


def expected_parts(x, y, seed, test, standardize):
    perm = np.random.default_rng([seed, 1]).permutation(len(y))
    n_test = round(test * len(y))
    train = x[perm[n_test:]]
    if standardize:
        mean, std = train.mean(axis=0), train.std(axis=0)
        train = (train - mean) / std
    return train, y[perm[n_test:]]


def test_csv_label_in_the_middle_first_batch_is_the_whole_training_part(tmp_path):
    exp = load_spec(write(tmp_path, HEAD + "  test: 0.25\n  standardize: true\n" + TAIL))
    x, y = csv_rows()
    np.testing.assert_array_equal(exp.data.x, x)
    np.testing.assert_array_equal(exp.data.y, y)
    assert (exp.data.features, exp.data.labels, exp.data.test, exp.data.standardize,
            exp.data.source) == ("X", "y", 0.25, True, "d.csv")
    train_x, train_y = expected_parts(x, y, 4, 0.25, True)
    order = np.random.default_rng([4, 2, 0]).permutation(6)
    np.testing.assert_allclose(exp.inputs["X"].value, train_x[order], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(exp.inputs["y"].value, train_y[order])
    assert exp.inputs["y"].value.dtype == np.int64 and exp.inputs["X"].value.dtype == np.float64
    assert not exp.inputs["X"].trainable and not exp.inputs["y"].trainable
    assert exp.wrt == ("w",)
    assert exp.inputs["X"].loaded_from == exp.data.loaded_from == (tmp_path / "d.csv").resolve()
    assert str(exp.inputs["X"].loc) == f"{tmp_path / 'spec.yaml'}:5:13"


def test_the_first_batch_follows_train_batch_size_and_the_spec_dtype(tmp_path, batch_size_key):
    text = ("dtype: float32\n" + HEAD + "  test: 0.25\n" + TAIL
            + "train: {optimizer: {name: sgd, lr: 0.1}, batch_size: 4, steps: 2}\n")
    exp = load_spec(write(tmp_path, text))
    x, y = csv_rows()
    train_x, train_y = expected_parts(x, y, 4, 0.25, False)
    first = np.random.default_rng([4, 2, 0]).permutation(6)[:4]
    np.testing.assert_array_equal(exp.inputs["X"].value, train_x[first].astype(np.float32))
    np.testing.assert_array_equal(exp.inputs["y"].value, train_y[first])
    assert exp.inputs["X"].value.dtype == np.float32 and exp.inputs["y"].value.dtype == np.int64


def test_npz_arrays_named_by_features_and_labels(tmp_path):
    rng = np.random.default_rng(0)
    feats, targets = rng.normal(size=(9, 3)), rng.normal(size=9)
    np.savez(tmp_path / "d.npz", F=feats, t=targets, other=np.zeros(2))
    text = ("seed: 2\ndata: {load: d.npz, features: F, labels: t, test: 0.3}\n"
            "inputs:\n  w: [1.0, 2.0, 3.0]\noutputs:\n  loss: sum(matmul(F, w) - t)\n")
    exp = load_spec(write(tmp_path, text, csv=None))
    perm = np.random.default_rng([2, 1]).permutation(9)
    order = np.random.default_rng([2, 2, 0]).permutation(6)
    np.testing.assert_array_equal(exp.inputs["F"].value, feats[perm[3:]][order])
    np.testing.assert_array_equal(exp.inputs["t"].value, targets[perm[3:]][order])
    assert exp.inputs["t"].value.dtype == np.float64  # float labels are targets, not classes


def test_a_bundled_set_is_sklearns(tmp_path):
    from sklearn.datasets import load_wine

    x, y = load_wine(return_X_y=True)
    text = ("data: {load: {dataset: wine}, features: X, labels: y, standardize: true}\n"
            "inputs:\n  w: {zeros: 13}\noutputs:\n  loss: sum(matmul(X, w))\n")
    exp = load_spec(write(tmp_path, text, csv=None))
    np.testing.assert_array_equal(exp.data.x, x)
    np.testing.assert_array_equal(exp.data.y, y)
    assert exp.data.source == "wine" and exp.data.loaded_from is None
    train_x, train_y = expected_parts(x, y, 0, 0.0, True)
    order = np.random.default_rng([0, 2, 0]).permutation(len(y))
    np.testing.assert_allclose(exp.inputs["X"].value, train_x[order], rtol=0, atol=1e-12)
    np.testing.assert_array_equal(exp.inputs["y"].value, train_y[order])


def test_data_names_are_usable_in_expressions_and_expect(tmp_path):
    x, y = csv_rows()
    text = (HEAD + TAIL + "expect:\n  values:\n    loss: "
            f"{float((x @ [1.0, -1.0]).sum() + y.sum())}\n")
    exp = load_spec(write(tmp_path, text))
    assert exp.expect.values["loss"] is not None


def place(tmp_path, line: int, column: int) -> str:
    return f"{tmp_path / 'spec.yaml'}:{line}:{column}: "


@pytest.mark.parametrize("head, where, message", [
    ("data: {load: {dataset: irs}, features: X, labels: y}\n", (1, 24),
     "data.load.dataset: unknown value 'irs'; expected one of digits, iris, wine, breast_cancer "
     "(did you mean 'iris'?)"),
    ("data: {load: nope.csv, features: X, labels: y}\n", (1, 14),
     "data.load: the file 'nope.csv' does not exist in the spec's directory"),
    ("data: {load: ../d.csv, features: X, labels: y}\n", (1, 14),
     "data.load: load path '../d.csv' leaves the spec's directory"),
    ("data: {load: /etc/passwd.csv, features: X, labels: y}\n", (1, 14),
     "data.load: load path '/etc/passwd.csv' is absolute"),
    ("data: {load: d.txt, features: X, labels: y}\n", (1, 14),
     "data.load: data loads a .csv or .npz file, got 'd.txt'"),
    ("data: {load: [d.csv], features: X, labels: y}\n", (1, 14),
     "data.load: expected a .csv or .npz file name or {dataset: NAME}, got a list"),
    ("data: {load: {dataset: iris, x: 1}, features: X, labels: y}\n", (1, 30),
     "data.load.x: unknown key 'x' in data.load"),
    ("data: {load: d.csv, label: knd, features: X, labels: y}\n", (1, 28),
     "data.label: the csv has no column 'knd'; its columns are h, kind, w (did you mean "
     "'kind'?)"),
    ("data: {load: {dataset: iris}, label: kind, features: X, labels: y}\n", (1, 38),
     "data.label: label names a csv column; a bundled dataset has none"),
    ("data: {load: d.csv, features: X, labels: y, test: 1}\n", (1, 51),
     "data.test: test is the held-out share of the rows: a number in [0, 1), got 1"),
    ("data: {load: d.csv, features: X, labels: y, test: -0.1}\n", (1, 51),
     "data.test: test is the held-out share of the rows: a number in [0, 1), got -0.1"),
    ("data: {load: d.csv, features: X, labels: y, test: lots}\n", (1, 51),
     "data.test: test is the held-out share of the rows: a number in [0, 1), got the string"),
    ("data: {load: d.csv, label: kind, features: X, labels: y, test: 0.95}\n", (1, 64),
     "data.test: with 8 rows, test: 0.95 leaves no row for training"),
    ("data: {load: d.csv, features: X, labels: y, standardise: true}\n", (1, 45),
     "data.standardise: unknown key 'standardise' in data (did you mean 'standardize'?)"),
    ("data: {load: d.csv, features: X, labels: y, standardize: 1}\n", (1, 58),
     "data.standardize: expected true or false, got a number"),
    ("data: {load: d.csv, labels: y}\n", (1, 7),
     "data: missing the required key 'features'"),
    ("data: {load: d.csv, features: w, labels: y}\n", (5, 3),
     "inputs.w: 'w' is already an input (line 1)"),
    ("data: {load: d.csv, features: X, labels: X}\n", (1, 42),
     "data.labels: 'X' is already an input (line 1)"),
    ("data: {load: d.csv, features: 2x, labels: y}\n", (1, 31),
     "data.features: '2x' is not a valid name"),
    ("data: [1]\n", (1, 7), "data: expected a mapping with load, features and labels, got a list"),
])
def test_bad_data_is_placed(tmp_path, head, where, message):
    err = error(tmp_path, head + "\n\n" + TAIL)
    assert str(err).splitlines()[0].startswith(place(tmp_path, *where) + message), str(err)


@pytest.mark.parametrize("csv, message", [
    ("h,kind,w\n1,a,2\n3,b,x\n", "line 3, column 3 ('w'): 'x' is not a number"),
    ("h,kind,w\n1,a,2\n3,b\n", "line 3 has 2 cells; the header has 3"),
    ("h,kind,w\n", "the csv has a header but no data rows"),
    ("h,kind,w\n1,,2\n", "line 2, column 2 ('kind'): '' is empty (the label)"),
])
def test_bad_csv_is_placed_at_load(tmp_path, csv, message):
    err = error(tmp_path, HEAD + TAIL, csv)
    assert str(err).splitlines()[0] == place(tmp_path, 3, 9) + "data.load: " + message


def test_a_label_clash_with_a_let_is_placed_at_the_later_name(tmp_path):
    text = HEAD.replace("labels: y", "labels: z") + "let:\n  z: sum(X)\n" + TAIL
    err = error(tmp_path, text)
    assert str(err).splitlines()[0].startswith(
        place(tmp_path, 8, 3) + "let.z: 'z' is already an input (line 6)")


def test_npz_errors_are_placed(tmp_path):
    np.savez(tmp_path / "d.npz", F=np.zeros((3, 2)), t=np.zeros(3), bad=np.zeros(4))
    base = "data: {load: d.npz, features: F, labels: t}\ninputs:\n  w: [1.0, 1.0]\n" \
           "outputs:\n  loss: sum(matmul(F, w))\n"
    missing = error(tmp_path, base.replace("features: F", "features: G"), csv=None)
    assert str(missing).splitlines()[0] == (
        place(tmp_path, 1, 31) + "data.load: d.npz has no array 'G'; it holds F, t, bad")
    short = error(tmp_path, base.replace("labels: t", "labels: bad"), csv=None)
    assert str(short).splitlines()[0] == (
        place(tmp_path, 1, 14) + "data.load: F has 3 rows but bad has 4")
    flat = error(tmp_path, base.replace("features: F", "features: t")
                 .replace("labels: t", "labels: F").replace("matmul(F, w)", "t"), csv=None)
    assert "data.load: t must be a 2-D array [rows, features], got shape [3]" in str(flat)
    np.savez(tmp_path / "e.npz", F=np.zeros((0, 2)), t=np.zeros(0))
    empty = error(tmp_path, base.replace("d.npz", "e.npz"), csv=None)
    assert str(empty).splitlines()[0] == place(tmp_path, 1, 14) + "data.load: the data set has no rows"
    label = error(tmp_path, base.replace("{load", "{label: x, load"), csv=None)
    assert str(label).splitlines()[0].startswith(place(tmp_path, 1, 15) + "data.label: label "
                                                 "names a csv column; a .npz file")


def test_file_problems_are_placed_and_never_block(tmp_path, monkeypatch):
    (tmp_path / "bin.csv").write_bytes(b"h,k\n\xff\xfe,1\n")
    err = error(tmp_path, HEAD.replace("d.csv", "bin.csv").replace("  label: kind\n", "") + TAIL)
    assert "data.load: bin.csv is not UTF-8 text (byte 4)" in str(err)
    os.mkfifo(tmp_path / "f.csv")
    err = error(tmp_path, HEAD.replace("d.csv", "f.csv") + TAIL)
    assert "data.load: load path 'f.csv' is a named pipe (FIFO), not a .csv file" in str(err)
    from gradcli import data

    monkeypatch.setattr(data, "MAX_CSV_BYTES", 40)
    err = error(tmp_path, HEAD + TAIL)
    assert str(err).splitlines()[0] == (place(tmp_path, 3, 9) + "data.load: d.csv is larger "
                                        "than the limit of 0 MiB for a csv file")


def test_a_data_set_past_the_cell_limit_is_placed(tmp_path, monkeypatch):
    from gradcli import data

    monkeypatch.setattr(data, "MAX_CELLS", 20)
    err = error(tmp_path, HEAD + TAIL)
    assert str(err).splitlines()[0] == (place(tmp_path, 3, 9) + "data.load: the data set has "
                                        "7 rows x 3 columns = 21 values; the limit is 20")
    np.savez(tmp_path / "d.npz", F=np.zeros((30, 2)), t=np.zeros(30))
    err = error(tmp_path, "data: {load: d.npz, features: F, labels: t}\n" + TAIL, csv=None)
    assert "array 'F' has shape [30, 2]; a data set holds at most 20 values" in str(err)


def test_a_missing_scikit_learn_is_a_spec_error_with_the_pip_hint(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    err = error(tmp_path, "data: {load: {dataset: digits}, features: X, labels: y}\n" + TAIL)
    assert str(err).splitlines()[0] == (
        place(tmp_path, 1, 24) + "data.load.dataset: the bundled dataset 'digits' needs "
        "scikit-learn, which is not installed (pip install 'gradcli[data]')")


def test_data_names_are_never_trainable_so_wrt_refuses_them(tmp_path):
    err = error(tmp_path, HEAD + TAIL + "wrt: [w, X]\n")
    assert str(err).splitlines()[0] == (
        place(tmp_path, 11, 10) + "wrt: input 'X' is not trainable, so it has no gradient "
        "(data's features and labels never are)")


def test_a_csv_with_a_byte_order_mark_and_crlf_lines(tmp_path):
    (tmp_path / "d.csv").write_bytes(b"\xef\xbb\xbfh,w\r\n1,2.5\r\n3,4\r\n")
    text = HEAD.replace("  label: kind\n", "  label: h\n") + TAIL.replace("[1.0, -1.0]", "[1.0]")
    exp = load_spec(write(tmp_path, text, csv=None))
    np.testing.assert_array_equal(exp.data.x, [[2.5], [4.0]])
    np.testing.assert_array_equal(exp.data.y, [1, 3])
