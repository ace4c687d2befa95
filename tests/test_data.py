"""gradcli.data against spec-v2's definitions written out with numpy, and against
sklearn.datasets called directly."""
from __future__ import annotations

import sys
from fractions import Fraction

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from gradcli import data
from gradcli.data import DataError, Parts


class Rows:
    """What prepare() reads from a DataSpec."""

    def __init__(self, x, y, test=0.0, standardize=False):
        self.x, self.y, self.test, self.standardize = np.asarray(x), np.asarray(y), test, standardize


def _rows(n=23, k=3, seed=5):
    rng = np.random.default_rng(seed)
    return rng.normal(3.0, 2.0, size=(n, k)), rng.integers(0, 3, size=n)


@pytest.mark.parametrize("n, test, seed", [(10, 0.25, 0), (10, 0.25, 7), (23, 0.5, 3),
                                           (5, 0.5, 1), (7, 0.0, 2), (150, 0.2, 42)])
def test_split_is_spec_v2s_permutation(n, test, seed):
    perm = np.random.default_rng([seed, 1]).permutation(n)
    n_test = round(test * n)
    test_rows, train_rows = data.split(n, test, seed)
    np.testing.assert_array_equal(test_rows, perm[:n_test])
    np.testing.assert_array_equal(train_rows, perm[n_test:])


def test_the_test_size_rounds_half_to_even():
    # 0.25 * 10 = 2.5 -> 2 and 0.5 * 5 = 2.5 -> 2 (Python's round); 0.35 * 10 -> 3.5 -> 4.
    assert [len(data.split(n, t, 0)[0]) for n, t in ((10, 0.25), (5, 0.5), (10, 0.35))] == \
        [2, 2, 4]


def test_standardizer_is_the_training_parts_mean_and_population_std():
    x, _ = _rows()
    mean, std = data.standardizer(x)
    np.testing.assert_allclose(mean, x.sum(axis=0) / len(x), rtol=1e-14)
    np.testing.assert_allclose(std, np.sqrt(((x - x.sum(0) / len(x)) ** 2).sum(0) / len(x)),
                               rtol=1e-12)


def test_a_constant_column_is_only_centred_to_exactly_zero():
    x = np.column_stack([np.full(7, 0.1), np.arange(7.0), np.zeros(7)])
    mean, std = data.standardizer(x)
    assert list(std[[0, 2]]) == [1.0, 1.0] and std[1] == pytest.approx(2.0)
    scaled = (x - mean) / std
    assert (scaled[:, [0, 2]] == 0).all()


def test_epoch_order_is_seeded_by_seed_2_epoch():
    for seed, epoch in ((0, 0), (0, 1), (9, 3)):
        np.testing.assert_array_equal(data.epoch_order(17, seed, epoch),
                                      np.random.default_rng([seed, 2, epoch]).permutation(17))
    assert not np.array_equal(data.epoch_order(17, 0, 0), data.epoch_order(17, 0, 1))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_prepare_splits_then_standardizes_with_the_training_statistics(dtype):
    x, y = _rows()
    seed, test = 11, 0.3
    parts = data.prepare(Rows(x, y, test, True), seed, dtype)
    perm = np.random.default_rng([seed, 1]).permutation(len(y))
    n_test = round(test * len(y))
    train, held = x[perm[n_test:]], x[perm[:n_test]]
    mean, std = train.mean(axis=0), train.std(axis=0, ddof=0)
    np.testing.assert_array_equal(parts.x_train, ((train - mean) / std).astype(dtype))
    np.testing.assert_array_equal(parts.x_test, ((held - mean) / std).astype(dtype))
    np.testing.assert_array_equal(parts.y_train, y[perm[n_test:]])
    np.testing.assert_array_equal(parts.y_test, y[perm[:n_test]])
    assert parts.x_train.dtype == dtype and parts.y_train.dtype == np.int64 and parts.has_test
    # The test part's own statistics are not used: its mean is not 0.
    assert np.abs(parts.x_test.mean(axis=0)).max() > 1e-3


def test_prepare_without_test_or_scaling_keeps_the_rows_and_float_labels_take_the_dtype():
    x, _ = _rows()
    y = np.linspace(-1, 1, len(x))
    parts = data.prepare(Rows(x, y), 4, "float32")
    perm = np.random.default_rng([4, 1]).permutation(len(x))
    np.testing.assert_array_equal(parts.x_train, x[perm].astype(np.float32))
    assert parts.y_train.dtype == np.float32 and not parts.has_test
    assert parts.x_test.shape == (0, 3)


@pytest.mark.parametrize("batch_size", [1, 4, 5, 19, 20, 64, None])
def test_batches_are_consecutive_rows_of_the_epoch_order_the_last_shorter_one_kept(batch_size):
    x, y = _rows(n=20)
    parts = Parts(x, y, x[:0], y[:0])
    seed, epoch = 3, 2
    order = np.random.default_rng([seed, 2, epoch]).permutation(20)
    size = 20 if batch_size is None else min(batch_size, 20)
    expected = [order[i:i + size] for i in range(0, 20, size)]
    got = [(xb.copy(), yb.copy()) for xb, yb in data.batches(parts, batch_size, seed, epoch)]
    assert len(got) == len(expected) == data.batch_count(20, batch_size)
    for (xb, yb), rows in zip(got, expected):
        np.testing.assert_array_equal(xb, x[rows])
        np.testing.assert_array_equal(yb, y[rows])


def test_batches_reuse_one_buffer_per_part():
    x, y = _rows(n=10)
    parts = Parts(x, y, x[:0], y[:0])
    seen = list(data.batches(parts, 4, 0, 0))
    first_x, first_y = seen[0]
    assert [len(b[0]) for b in seen] == [4, 4, 2]
    for xb, yb in seen[1:]:
        assert np.shares_memory(xb, first_x) and np.shares_memory(yb, first_y)
    assert not np.shares_memory(first_x, x)  # the part itself is never written


# ----- csv -----
def test_csv_label_column_in_the_middle_features_in_file_order():
    text = "a, b ,kind,c\n1,2,cat,3\n4,5.5,dog,6\n\n7,-8e-1,cat,9\n"
    loaded = data.parse_csv(text, "kind")
    np.testing.assert_array_equal(loaded.x, [[1, 2, 3], [4, 5.5, 6], [7, -0.8, 9]])
    np.testing.assert_array_equal(loaded.y, [0, 1, 0])
    assert loaded.y.dtype == np.int64 and loaded.classes == ("cat", "dog")


def test_csv_string_labels_are_numbered_in_sorted_order():
    loaded = data.parse_csv("x,label\n1,versicolor\n2,setosa\n3,virginica\n4,setosa\n")
    assert loaded.classes == ("setosa", "versicolor", "virginica")
    np.testing.assert_array_equal(loaded.y, [1, 0, 2, 0])


def test_csv_integer_labels_stay_themselves_and_decimal_ones_are_targets():
    ints = data.parse_csv("x,y\n1,3\n2,0\n3,-1\n")
    np.testing.assert_array_equal(ints.y, [3, 0, -1])
    assert ints.y.dtype == np.int64 and ints.classes is None
    floats = data.parse_csv("x,y\n1,3\n2,0.5\n")
    assert floats.y.dtype == np.float64 and list(floats.y) == [3.0, 0.5]


def test_csv_quoted_cells_and_a_quoted_newline():
    loaded = data.parse_csv('x,"the, label"\n"1.5","a\nb"\n2,c\n', "the, label")
    np.testing.assert_array_equal(loaded.x, [[1.5], [2.0]])
    assert loaded.classes == ("a\nb", "c")


@pytest.mark.parametrize("text, label, message", [
    ("", None, "the csv file is empty"),
    ("1,2\n3,4\n", None, "line 1: the first row holds only numbers; a csv needs a header row"),
    ("a,b\n", None, "the csv has a header but no data rows"),
    ("a\n1\n", None, "the csv has one column"),
    ("a,b,c\n1,2,3\n4,5\n", None, "line 3 has 2 cells; the header has 3"),
    ("a,b,c\n1,2,3\n4,x5,6\n", None, "line 3, column 2 ('b'): 'x5' is not a number"),
    ("a,b,c\n1,,3\n", "a", "line 2, column 2 ('b'): '' is not a number"),
    ("a,b\nnan,1\n", None, "line 2, column 1 ('a'): 'nan' is not finite"),
    ("a,b\n1e400,1\n", None, "line 2, column 1 ('a'): '1e400' is too large for a float"),
    ("a,b\n1,\n", None, "line 2, column 2 ('b'): '' is empty (the label)"),
    ("a,bb\n1,2\n", "b", "the csv has no column 'b'; its columns are a, bb"),
    ("a,b,b\n1,2,3\n", "b", "the csv has 2 columns named 'b'"),
])
def test_csv_errors_say_where(text, label, message):
    with pytest.raises(DataError) as info:
        data.parse_csv(text, label)
    assert info.value.message.startswith(message), info.value.message


def test_a_data_set_past_the_cell_limit_is_refused(monkeypatch):
    monkeypatch.setattr(data, "MAX_CELLS", 20)
    with pytest.raises(DataError, match="limit is 20"):
        data.parse_csv("a,b\n" + "1,2\n" * 11)
    with pytest.raises(DataError, match="limit is 20"):
        data.from_arrays(np.zeros((10, 2)), np.zeros(10))


# ----- arrays and bundled sets -----
@pytest.mark.parametrize("x, y, message", [
    (np.zeros(4), np.zeros(4), "features must be a 2-D array"),
    (np.zeros((4, 2)), np.zeros((4, 1)), "labels must be a 1-D array"),
    (np.zeros((4, 2)), np.zeros(3), "features has 4 rows but labels has 3"),
    (np.array([[1.0, np.inf]]), np.zeros(1), "features[0, 1] is inf"),
    (np.zeros((1, 2)), np.array([np.nan]), "labels[0] is nan"),
])
def test_array_errors(x, y, message):
    with pytest.raises(DataError) as info:
        data.from_arrays(x, y)
    assert info.value.message.startswith(message), info.value.message


def test_array_dtypes_int_and_bool_labels_are_int64_classes():
    loaded = data.from_arrays(np.array([[1, 2], [3, 4]], np.int32), np.array([True, False]))
    assert loaded.x.dtype == np.float64 and loaded.y.dtype == np.int64
    assert list(loaded.y) == [1, 0]


@pytest.mark.parametrize("name", data.DATASETS)
def test_bundled_sets_are_sklearns(name):
    from sklearn import datasets

    x, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    loaded = data.load_bundled(name)
    np.testing.assert_array_equal(loaded.x, x)
    np.testing.assert_array_equal(loaded.y, y)
    assert loaded.x.dtype == np.float64 and loaded.y.dtype == np.int64


def test_a_missing_scikit_learn_gives_the_pip_hint(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)  # import sklearn -> ImportError
    with pytest.raises(DataError) as info:
        data.load_bundled("iris")
    assert "needs scikit-learn" in info.value.message
    assert info.value.hint == "pip install 'gradcli[data]'"


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 40), batch_size=st.one_of(st.none(), st.integers(1, 50)),
       seed=st.integers(0, 2**32 - 1), epoch=st.integers(0, 5))
def test_batches_cover_the_epoch_order_once(n, batch_size, seed, epoch):
    x = np.arange(n * 2, dtype=np.float64).reshape(n, 2)
    y = np.arange(n, dtype=np.int64)
    sizes, rows = [], []
    for xb, yb in data.batches(Parts(x, y, x[:0], y[:0]), batch_size, seed, epoch):
        np.testing.assert_array_equal(xb, x[yb])  # rows stay paired with their labels
        sizes.append(len(yb))
        rows.extend(yb.tolist())
    assert rows == np.random.default_rng([seed, 2, epoch]).permutation(n).tolist()
    full = n if batch_size is None else min(batch_size, n)
    assert sizes[:-1] == [full] * (len(sizes) - 1) and 0 < sizes[-1] <= full


@pytest.fixture
def built_rows(monkeypatch):
    """The length of every row csv.reader gave parse_csv (what it built)."""
    import csv
    seen, reader = [], csv.reader

    def spy(lines):
        for row in reader(lines):
            seen.append(len(row))
            yield row
    monkeypatch.setattr(csv, "reader", spy)
    return seen


def test_a_row_wider_than_the_header_is_refused_before_it_is_built(built_rows):
    with pytest.raises(DataError) as info:
        data.parse_csv("a,b\n1,2\n" + ",".join(["10"] * 1000) + "\n")
    assert info.value.message == "line 3 has more than 2 cells; the header has 2"
    assert built_rows == [2, 2]  # the wide row never became a list of cells


def test_a_header_wider_than_the_cell_limit_is_refused_before_it_is_built(monkeypatch,
                                                                          built_rows):
    monkeypatch.setattr(data, "MAX_CELLS", 50)
    with pytest.raises(DataError) as info:
        data.parse_csv(",".join(f"c{i}" for i in range(51)) + "\n1\n")
    assert info.value.message == ("line 1: the header has more than 50 columns; a data set "
                                  "holds at most 50 values")
    assert built_rows == []
    assert data.parse_csv(",".join(f"c{i}" for i in range(50)) + "\n" + "1," * 49 + "1\n").x.shape \
        == (1, 49)  # exactly the limit: read


@pytest.mark.parametrize("text, labels", [
    ('a,b\n1,"x, y, z"\n2,",,,"\n', ["x, y, z", ",,,"]),        # commas inside quotes are text
    ('a,b\n1,"x\n,,,\ny"\n2,z\n', ["x\n,,,\ny", "z"]),          # ... on the lines a cell spans
    ('a,b\n1,"q"",,"\n2,"""a,b"""\n', ['q",,', '"a,b"']),       # "" is a quote inside quotes
    ('a,b\r1,"p,q"\r2,r\r', ["p,q", "r"]),                      # \r ends a line too
])
def test_quoted_commas_are_not_counted_as_cells(text, labels):
    loaded = data.parse_csv(text)
    assert [loaded.classes[i] for i in loaded.y] == labels


@pytest.mark.parametrize("text, message", [
    # a quoted newline spans a record over lines 4-5: line 5 alone ('y",3') has 2 cells
    ('a,b\n1,"x\ny"\n2,"x\ny",3\n', "the record on lines 4-5 has more than 2 cells; the "
     "header has 2"),
    ('a,b\n1,"x\n\ny",3\n', "the record on lines 2-4 has more than 2 cells; the header has 2"),
    ('a,b\r\n1,"x\r\ny"\r\n\r\n2,"x\r\ny,",3\r\n',  # after a blank line, \r\n endings
     "the record on lines 5-6 has more than 2 cells; the header has 2"),
    ('a,b\n1,2,"x\ny"\n', "line 2 has more than 2 cells; the header has 2"),  # wide on line 2
    ('a,b,c\n"p\nq",2\n3,4,5\n', "the record on lines 2-3 has 2 cells; the header has 3"),
    ('a,b\n"1\nx",2\n', "the record on lines 2-3, column 1 ('a'): '1\\nx' is not a number"),
])
def test_a_record_spanning_lines_is_reported_on_its_lines(text, message, built_rows):
    with pytest.raises(DataError) as info:
        data.parse_csv(text)
    assert info.value.message == message
    if "more than" in message:
        assert max(built_rows) == 2  # the wide record never became a list of cells


@pytest.mark.parametrize("row", ['1,x"y,z', '1, "y,z"', '1,"y"z,w'])
def test_a_quote_inside_a_cell_does_not_hide_its_commas(row, built_rows):
    # csv reads a quote only where a cell starts; elsewhere it is text, and the comma after
    # it a delimiter: 3 cells, refused before the row is built
    with pytest.raises(DataError, match="line 2 has more than 2 cells"):
        data.parse_csv(f"a,b\n{row}\n")
    assert built_rows == [2]


@pytest.mark.parametrize("digits", [400, 5000])  # not a float either; int() refuses 4,301
def test_a_label_too_large_for_a_float_is_a_class_name_at_any_length(digits):
    big = "1" * digits
    loaded = data.parse_csv(f"a,b\n1,{big}\n2,3\n")
    assert loaded.classes == (big, "3") and list(loaded.y) == [0, 1]


def _no_warnings(call):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning would be raised here
        return call()


@pytest.mark.parametrize("x, y, standardize, dtype, message", [
    # the training part (rows 0-2) has std 8e-11; the held-out row 3 lies 1e308 from its mean
    ([[5.0, 1.0], [6.0, 1.0 + 2e-10], [7.0, 1.0 + 1e-10], [8.0, 1e308]], [0, 1, 0, 1], True,
     "float64", "feature column 2: standardizing it overflows float64 (its values reach 1e+308)"),
    ([[1.0], [-1e300], [3.0]], [0, 1, 0], False, "float32",
     "feature column 1: -1e+300 does not fit float32 (at most 3.40282e+38 in size)"),
    ([[1.0], [2.0], [3.0]], [0.5, 1e300, 2.0], False, "float32",
     "a label (1e+300) does not fit float32 (at most 3.40282e+38 in size)"),
])
def test_a_value_that_overflows_when_scaled_or_cast_is_refused_by_column(x, y, standardize,
                                                                         dtype, message):
    test = 0.25 if len(y) == 4 else 0.0  # with seed 0, the held-out row of 4 is row 3
    with pytest.raises(DataError) as info:
        _no_warnings(lambda: data.prepare(Rows(x, y, test=test, standardize=standardize), 0,
                                          dtype))
    assert info.value.message == message


def test_large_values_that_fit_are_standardized_as_numpy_does():
    x = np.array([[1e150], [-1e150], [3e149]])
    parts = _no_warnings(lambda: data.prepare(Rows(x, [0, 1, 0], standardize=True), 0,
                                              "float32"))
    expected = ((x - x.mean(axis=0)) / x.std(axis=0)).astype(np.float32)
    np.testing.assert_array_equal(np.sort(parts.x_train, axis=0), np.sort(expected, axis=0))


HUGE_COLUMNS = [[1e300, -1e300, 3e299], [1e155, 2e155, -3e155, 4e155],
                [1.0, 1.7e308, 1.7e308, -1.7976931348623157e308, 2.5e-300],
                [-8.98846567431158e307] * 5 + [8.98846567431158e307]]


def _exact_standardized(column: list) -> list:
    """(x - mean) / std (ddof 0) of the column, worked out in exact fractions and a
    60-digit square root: the oracle for columns whose squares pass float64's range."""
    from decimal import Decimal, getcontext
    from fractions import Fraction
    getcontext().prec = 60
    xs = [Fraction(v) for v in column]
    mean = sum(xs) / len(xs)
    var = sum((v - mean) ** 2 for v in xs) / len(xs)
    std = (Decimal(var.numerator) / Decimal(var.denominator)).sqrt()
    return [float(Decimal((v - mean).numerator) / Decimal((v - mean).denominator) / std)
            for v in xs]


@pytest.mark.parametrize("column", HUGE_COLUMNS)
def test_a_column_whose_squares_overflow_is_standardized_exactly(column):
    """Values near 1e155 or more: np.std squares them past float64's range (it was refused);
    scaled by the power of two at the column's maximum first, they are standardized to float64
    rounding of the exact answer, and to numpy's own on the column divided by that power."""
    x = np.column_stack([np.array(column), np.arange(len(column), dtype=np.float64)])
    parts = _no_warnings(lambda: data.prepare(Rows(x, [0] * len(column), standardize=True), 0,
                                              "float64"))
    rows = data.split(len(column), 0.0, 0)[1]  # the training part's order (no test part)
    np.testing.assert_allclose(parts.x_train[:, 0], np.array(_exact_standardized(column))[rows],
                               rtol=1e-15, atol=1e-15)  # a few ulps of values ~1
    power = 2.0 ** np.ceil(np.log2(np.abs(column).max()) - 1)  # numpy, on values below 2
    small = np.array(column)[rows] / power
    np.testing.assert_array_equal(parts.x_train[:, 0], (small - small.mean()) / small.std())
    # the ordinary column beside it is numpy's own, bit for bit
    ordinary = x[rows, 1]
    np.testing.assert_array_equal(parts.x_train[:, 1],
                                  (ordinary - ordinary.mean()) / ordinary.std())
    mean, std = data.standardizer(x)
    np.testing.assert_allclose(mean[0], float(sum(map(Fraction, column)) / len(column)),
                               rtol=4e-16)


def test_ordinary_columns_standardize_bit_for_bit_as_numpy_does():
    """The scaling touches only columns whose plain statistics overflow: over columns of every
    size from 1e-300 to 1e150, prepare gives numpy's (x - mean) / std to the last bit."""
    rng = np.random.default_rng(2026)
    for k in range(200):
        n, cols = int(rng.integers(1, 60)), int(rng.integers(1, 5))
        x = rng.normal(rng.normal(size=cols) * 5, rng.uniform(0.01, 3, size=cols),
                       size=(n, cols)) * 10.0 ** rng.uniform(-300, 150, size=cols)
        rows = Rows(x, [0] * n, standardize=True)
        parts = _no_warnings(lambda: data.prepare(rows, k, "float64"))  # noqa: B023 - called here
        train = x[data.split(n, 0.0, k)[1]]
        mean, std = train.mean(axis=0), train.std(axis=0)
        same = (train == train[:1]).all(axis=0)
        want = (train - np.where(same, train[0], mean)) / np.where(same | (std == 0), 1.0, std)
        assert parts.x_train.tobytes() == want.tobytes(), k
