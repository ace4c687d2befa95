"""Data sets for training: rows from a csv, from arrays or from scikit-learn's bundled sets,
then spec-v2's exact split, standardization, epoch order and batches.

Pure numpy (scikit-learn only for the bundled sets, imported when one is asked for): no
backend and no YAML here. Problems with the data raise DataError with a plain message;
spec/data.py places them in the spec.
"""
from __future__ import annotations

import csv
import math
import re
import warnings
from collections.abc import Iterator

import numpy as np

from gradcli.datasets import DATASETS, MAX_CELLS, MAX_CSV_BYTES, PIP_HINT  # noqa: F401 - here too
from gradcli.record import record

# A number as float() reads it, minus what float() also takes (inf, nan, 1_000); spaces around.
_NUMBER = re.compile(r"\s*[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*\Z")
_INTEGER = re.compile(r"\s*[+-]?[0-9]+\s*\Z")
_INT64 = (-(1 << 63), (1 << 63) - 1)


class DataError(ValueError):
    """The data cannot be used; `hint` says what to do, when something can be done."""

    def __init__(self, message: str, hint: str | None = None, about: str | None = None) -> None:
        super().__init__(message)
        self.message, self.hint = message, hint
        self.about = about  # "label" when the label column is the problem


@record
class Loaded:
    """Every row as loaded: features float64 [n, k], labels [n] (int64 classes or float64),
    and the class names when the labels were strings (index i is classes[i])."""

    x: np.ndarray
    y: np.ndarray
    classes: tuple[str, ...] | None = None


@record
class Parts:
    """The training and test parts (the test part may have 0 rows), features in the run's
    dtype (standardized if asked), labels int64 for classes."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray

    @property
    def has_test(self) -> bool:
        return len(self.y_test) > 0


# ----- spec-v2's definitions -----
def held_out(n: int, test: float) -> int:
    """How many of `n` rows are held out: round(test * n) (Python's round, half to even)."""
    return round(test * n)


def split(n: int, test: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(test_rows, train_rows): perm = default_rng([seed, 1]).permutation(n), the test part
    perm[:n_test] and the training part perm[n_test:], each in that order."""
    perm = np.random.default_rng([seed, 1]).permutation(n)
    n_test = held_out(n, test)
    return perm[:n_test], perm[n_test:]


def standardizer(x_train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std) per column, ddof 0, of the training part; a column whose std is 0 gets
    std 1, so it is only centred."""
    mean, std, scale = scaled_standardizer(x_train)
    return mean * scale, std * scale


def scaled_standardizer(x_train: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(mean, std, scale) per column: the standardized column is (x / scale - mean) / std,
    mean and std (ddof 0) being those of x / scale; scale is 1 for every column whose plain
    statistics are finite, so that their results are numpy's own, bit for bit.

    A column whose values reach ~1e154 has a square, and so a std, past float64's range
    (1e300 / -1e300 / 3e299 gave std inf). Its scale is the power of two at its largest
    |value| (dividing by a power of two is exact): its statistics are then those of values
    below 2 in size, and only the standardized result, which is at most sqrt(n) in size,
    comes back out of the scaled units.

    A constant column is detected by its values, not by np.std == 0: the mean of n copies of
    0.1 can miss 0.1 by an ulp, and dividing that ulp by a std of 1e-17 would blow it up.
    Its mean is then its value, so it is centred to exactly 0.
    """
    x_train = np.asarray(x_train)
    with np.errstate(all="ignore"):  # an overflow is what is looked for below
        mean, std = x_train.mean(axis=0), x_train.std(axis=0)
    scale = np.ones_like(std)
    huge = ~(np.isfinite(mean) & np.isfinite(std))
    if len(x_train) and huge.any():
        peak = np.abs(x_train[:, huge]).max(axis=0)
        scale[huge] = np.ldexp(1.0, np.frexp(peak)[1] - 1)  # peak / scale in [1, 2)
        part = x_train[:, huge] / scale[huge]
        mean[huge], std[huge] = part.mean(axis=0), part.std(axis=0)
    constant = (x_train == x_train[:1]).all(axis=0) if len(x_train) else np.ones_like(std, bool)
    if len(x_train):
        mean = np.where(constant, x_train[0] / scale, mean)
    return mean, np.where(constant | (std == 0), 1.0 / scale, std), scale


def epoch_order(n_train: int, seed: int, epoch: int) -> np.ndarray:
    """The order epoch `epoch` (0-based) visits the training part in."""
    return np.random.default_rng([seed, 2, epoch]).permutation(n_train)


def batch_count(n_train: int, batch_size: int | None) -> int:
    """Batches per epoch: the last, shorter batch counts."""
    size = n_train if batch_size is None else min(batch_size, n_train)
    return math.ceil(n_train / size) if size else 0


def prepare(data, seed: int, dtype: str) -> Parts:
    """Split `data` (a DataSpec, or anything with x, y, test, standardize) with the run's seed,
    standardize with the training part's statistics if asked, and cast: features to `dtype`,
    integer labels to int64, float labels to `dtype`."""
    x, y = np.asarray(data.x, dtype=np.float64), np.asarray(data.y)
    test_rows, train_rows = split(len(y), data.test, seed)
    x_train, x_test = x[train_rows], x[test_rows]
    label_dtype = np.int64 if y.dtype.kind in "biu" else dtype
    # an overflow is found below and refused by column, never warned about by numpy
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the mean of no rows or no columns
        if data.standardize:
            mean, std, scale = scaled_standardizer(x_train)
            x_train, x_test = (x_train / scale - mean) / std, (x_test / scale - mean) / std
            def overflow(col, v):
                return (f"feature column {col + 1}: standardizing it overflows float64 (its "
                        f"values reach {np.abs(x[:, col]).max():g})",
                        "scale the column down, or drop standardize")
            # an infinite std would make the column all 0, silently: refused as well
            _finite(np.vstack([mean, std]), x_train, overflow)
            _finite(x_test, x_test, overflow)
        parts = Parts(x_train.astype(dtype), y[train_rows].astype(label_dtype),
                      x_test.astype(dtype), y[test_rows].astype(label_dtype))
    limit = f"{np.finfo(dtype).max:g}" if np.dtype(dtype).kind == "f" else ""
    _finite(parts.x_train, parts.x_test, lambda col, v: (
        f"feature column {col + 1}: {x[:, col][np.argmax(np.abs(x[:, col]))]:g} does not fit "
        f"{dtype} (at most {limit} in size)", "scale the column down, or use dtype: float64"))
    if label_dtype != np.int64:
        _finite(parts.y_train[:, None], parts.y_test[:, None], lambda col, v: (
            f"a label ({np.abs(y).max():g}) does not fit {dtype} (at most {limit} in size)",
            "scale the labels down, or use dtype: float64"))
    return parts


def _finite(train: np.ndarray, test: np.ndarray, problem) -> None:
    """Refuse a non-finite value (data is finite when loaded: one made by scaling or a cast),
    with problem(column, value) -> (message, hint)."""
    for part in (train, test):
        if part.size and not np.isfinite(part).all():
            col = int(np.argwhere(~np.isfinite(part))[0][1])
            raise DataError(*problem(col, part[:, col]))


def batches(parts: Parts, batch_size: int | None, seed: int,
            epoch: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Epoch `epoch`'s batches of the training part: consecutive `batch_size` rows of
    epoch_order (None: the whole part at once), the last, shorter batch kept.

    Every batch is gathered into one buffer per part (np.take(out=)), so a batch is
    overwritten by the next one: copy it to keep it.
    """
    x, y = parts.x_train, parts.y_train
    n = len(y)
    size = n if batch_size is None else min(batch_size, n)
    order = epoch_order(n, seed, epoch)
    x_buf = np.empty((size, *x.shape[1:]), x.dtype)
    y_buf = np.empty((size, *y.shape[1:]), y.dtype)
    for start in range(0, n, max(size, 1)):
        rows = order[start:start + size]
        if len(rows) != size:  # the last, shorter batch: the buffers' first rows
            x_buf, y_buf = x_buf[:len(rows)], y_buf[:len(rows)]
        # the methods: np.take's dispatch costs as much as taking a small batch (every step);
        # mode "clip": "raise" first takes into a temporary buffer when given out=, and the
        # rows of a permutation are all in range, so clipping never changes one
        yield (x.take(rows, axis=0, out=x_buf, mode="clip"),
               y.take(rows, axis=0, out=y_buf, mode="clip"))


# ----- loading -----
def from_arrays(x, y, features: str = "features", labels: str = "labels") -> Loaded:
    """Rows from arrays: features [n, k] (bool, int or float), labels [n] (bool or int ->
    int64 classes, float -> float64 targets); every value finite."""
    x, y = np.asarray(x), np.asarray(y)
    if x.ndim != 2:
        raise DataError(f"{features} must be a 2-D array [rows, features], got shape "
                        f"{list(x.shape)}", "reshape it to [rows, features] before saving")
    if y.ndim != 1:
        raise DataError(f"{labels} must be a 1-D array [rows], got shape {list(y.shape)}")
    if len(x) != len(y):
        raise DataError(f"{features} has {len(x)} rows but {labels} has {len(y)}")
    check_cells(x.shape[0], x.shape[1] + 1)
    for name, array in ((features, x), (labels, y)):
        if array.dtype.kind not in "biuf":
            raise DataError(f"{name} has dtype {array.dtype}; data must be bool, integer or float")
    if x.dtype.kind == "f" and not np.isfinite(x).all():
        row, col = np.argwhere(~np.isfinite(x))[0]
        raise DataError(f"{features}[{row}, {col}] is {x[row, col]}; data values must be finite")
    if y.dtype.kind == "u" and len(y) and y.max() > _INT64[1]:
        raise DataError(f"{labels} holds values too large for int64")
    if y.dtype.kind == "f":
        if not np.isfinite(y).all():
            row = int(np.argwhere(~np.isfinite(y))[0, 0])
            raise DataError(f"{labels}[{row}] is {y[row]}; data values must be finite")
        return Loaded(x.astype(np.float64), y.astype(np.float64))
    return Loaded(x.astype(np.float64), y.astype(np.int64))


def check_cells(rows: int, columns: int) -> None:
    if rows * columns > MAX_CELLS:
        raise DataError(f"the data set has {rows} rows x {columns} columns = {rows * columns} "
                        f"values; the limit is {MAX_CELLS}")


def load_bundled(name: str) -> Loaded:
    """One of scikit-learn's bundled sets (no download), as sklearn.datasets.load_<name>
    gives it. Raises DataError when scikit-learn is missing."""
    if name not in DATASETS:
        raise DataError(f"unknown dataset {name!r}; expected one of {', '.join(DATASETS)}")
    try:
        from sklearn import datasets
    except ImportError:
        raise DataError(f"the bundled dataset {name!r} needs scikit-learn, which is not "
                        "installed", PIP_HINT) from None
    x, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    return from_arrays(x, y)


# A quoted field where a field starts (csv's default dialect: a quote elsewhere is literal),
# to its closing quote or, unclosed, to the line's end (it goes on in the next line).
# Possessive (*+): "" is always an escaped quote, never a closing quote and an opening one.
_QUOTED = re.compile(r'(?:(?<=,)|\A)"(?:[^"]|"")*+("|\Z)')
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")
_QUOTED_REST = re.compile(r'(?:[^"]|"")*+"')  # the rest of a quoted field begun on a line above


class _Lines:
    """The csv's physical lines, as csv.reader pulls them, counting the delimiters of the
    record being read: one past `limit` cells raises DataError before csv builds the row (a
    row is a list of str objects, ~20 times its text: 40,000,000 cells of "10" are 120 MB
    of text and 3.5 GB of row). csv.reader pulls a record's lines and no more, so the count
    restarts with each row (done())."""

    def __init__(self, text: str) -> None:
        # the lines as io.StringIO(text, newline="") gives them (\r, \n or \r\n kept at the
        # end, so quoted newlines survive), without its copy of the text (4 bytes a character)
        self.lines = (m.group() for m in _LINE.finditer(text))
        self.line_num, self.cells, self.inside = 0, 1, False
        self.limit, self.what = MAX_CELLS, None
        self.start, self.last = 1, (1, 1)  # the record being read begins at line start

    def __iter__(self):
        return self

    def __next__(self) -> str:
        line = next(self.lines)
        self.line_num += 1
        rest = line
        if self.inside:  # a quoted field goes on: its commas are text
            end = _QUOTED_REST.match(line)
            if end is None:
                return line
            rest, self.inside = line[end.end():], False
        if '"' in rest:
            rest = _QUOTED.sub(self._unclosed, rest)
        self.cells += rest.count(",")
        if self.cells > self.limit:
            raise DataError(self.what(place(self.start, self.line_num), self.limit))
        return line

    def _unclosed(self, match) -> str:
        self.inside = not match.group(1)
        return ""

    def done(self, limit: int, what) -> None:
        """A record was read (its lines are kept in `last`); the next may hold at most `limit`
        cells, else what(place, limit)."""
        self.cells, self.inside, self.limit, self.what = 1, False, limit, what
        self.last, self.start = (self.start, self.line_num), self.line_num + 1


def place(start: int, end: int) -> str:
    """Where a record is: "line 7", or "the record on lines 7-9" when quoted newlines span it
    over several (the line where it went wrong alone would not hold what is said of it)."""
    return f"line {end}" if end <= start else f"the record on lines {start}-{end}"


def _rows(reader, lines: _Lines, width: list):
    """The reader's rows; its csv.Error (a cell past csv's field limit, a NUL) a DataError.
    The first non-empty row (the header) may hold MAX_CELLS cells, each later one width[0]."""
    lines.done(MAX_CELLS, lambda where, limit: (
        f"{where}: the header has more than {limit:,} columns; a data set holds at most "
        f"{MAX_CELLS:,} values"))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            problem = (f"a cell is longer than {csv.field_size_limit():,} characters, the limit "
                       "for one csv cell" if "field larger than field limit" in str(exc)
                       else f"cannot read it as csv: {exc}")
            raise DataError(f"line {reader.line_num}: {problem}") from None
        if row:
            width[0] = width[0] or len(row)
            lines.done(width[0], lambda where, limit: (
                f"{where} has more than {limit} cells; the header has {limit}"))
        else:
            lines.done(lines.limit, lines.what)
        yield row


def parse_csv(text: str, label: str | None = None) -> Loaded:
    """Rows from csv text with a header row: the column headed `label` (default: the last)
    holds the labels, every other column is a feature, in file order.

    Feature cells must be finite numbers. Labels that are all integers become int64
    classes, all numbers float64 targets; otherwise each distinct string is a class,
    numbered in sorted order (classes[i] is class i's name). Blank lines are skipped and
    cells are stripped of surrounding spaces. Errors name the csv line and column.
    """
    lines = _Lines(text)
    reader = csv.reader(lines)
    rows = _rows(reader, lines, [0])
    header = next((row for row in rows if row), None)
    if header is None:
        raise DataError("the csv file is empty; it needs a header row and data rows")
    header = [cell.strip() for cell in header]
    if all(_NUMBER.match(cell) for cell in header):
        raise DataError(f"{place(*lines.last)}: the first row holds only numbers; a csv needs "
                        "a header row naming its columns")
    width = len(header)
    if width < 2:
        raise DataError("the csv has one column; it needs at least one feature and the label")
    if label is None:
        at = width - 1
    elif label not in header:
        import difflib  # only for this error

        close = difflib.get_close_matches(label, header, n=1, cutoff=0.6)
        raise DataError(f"the csv has no column {label!r}; its columns are "
                        f"{', '.join(header)}", f"did you mean {close[0]!r}?" if close else None,
                        "label")
    elif header.count(label) > 1:
        raise DataError(f"the csv has {header.count(label)} columns named {label!r}",
                        about="label")
    else:
        at = header.index(label)
    x: list[float] = []
    y: list[str] = []
    for row in rows:
        if not row:
            continue
        if len(row) != width:
            raise DataError(f"{place(*lines.last)} has {len(row)} cells; the header has "
                            f"{width}")
        if (len(y) + 1) * width > MAX_CELLS:
            check_cells(len(y) + 1, width)
        cells = row[:at] + row[at + 1:]
        if not all(map(_NUMBER.match, cells)):  # one pass for the common case; then find it
            col = next(c for c, cell in enumerate(row) if c != at and not _NUMBER.match(cell))
            raise DataError(_bad_cell(place(*lines.last), col, header, row[col].strip()))
        start = len(x)
        x.extend(map(float, cells))
        if not all(map(math.isfinite, x[start:])):
            col = next(c for c, cell in enumerate(row)
                       if c != at and not math.isfinite(float(cell)))
            raise DataError(_bad_cell(place(*lines.last), col, header, row[col].strip(),
                                      "is too large for a float"))
        y.append(row[at].strip())
        if not y[-1]:
            raise DataError(_bad_cell(place(*lines.last), at, header, "", "is empty (the label)"))
    if not y:
        raise DataError("the csv has a header but no data rows")
    features = np.array(x, dtype=np.float64).reshape(len(y), width - 1)
    return _labels(features, y)


def _bad_cell(where: str, col: int, header: list[str], cell: str, what: str | None = None) -> str:
    if what is None:
        what = ("is not finite; data values must be finite numbers"
                if cell.lower().lstrip("+-.") in ("nan", "inf", "infinity") else "is not a number")
    shown = cell if len(cell) <= 40 else cell[:37] + "..."
    return f"{where}, column {col + 1} ({header[col]!r}): {shown!r} {what}"


def _labels(x: np.ndarray, cells: list[str]) -> Loaded:
    # past 19 digits a label cannot be an int64 (and int() refuses 4,300 digits): not classes
    if all(_INTEGER.match(c) and len(c.strip().lstrip("+-").lstrip("0")) <= 19 for c in cells):
        values = [int(c) for c in cells]
        if _INT64[0] <= min(values) and max(values) <= _INT64[1]:
            return Loaded(x, np.array(values, dtype=np.int64))
    if all(_NUMBER.match(c) for c in cells):
        y = np.array([float(c) for c in cells])
        if np.isfinite(y).all():
            return Loaded(x, y)
    classes = tuple(sorted(set(cells)))
    index = {name: i for i, name in enumerate(classes)}
    return Loaded(x, np.array([index[c] for c in cells], dtype=np.int64), classes)
