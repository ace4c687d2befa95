"""Build the `data:` section: load the rows (csv, npz or a bundled set), check them, and give
the features/labels names their first training batch as inputs.

File access goes through the inputs' `load:` rules (npz.resolve: relative to the spec, never
out of its directory, regular files only). gradcli/data.py does the loading and the
spec-v2 arithmetic; this module places its errors in the spec.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from gradcli.spec.arrays import Made
from gradcli.spec.document import Map, Mark, Scalar, YNode
from gradcli.spec.fields import (
    check_keys,
    describe,
    expect_bool,
    expect_choice,
    expect_int,
    expect_map,
    expect_name,
    expect_str,
    fail,
    number_value,
    optional,
    sub,
)
from gradcli.spec.files import NotRegular, TooLarge, read_regular
from gradcli.spec.model import DataSpec, InputSpec
from gradcli.spec.names import Names
from gradcli.spec.sections import DATA, DATA_LOAD
from gradcli.spec.shared_loads import shared

FILE_KINDS = (".csv", ".npz")
MAX_BATCH = 10_000_000


def declare_names(node: YNode | None, names: Names, named: Mark | None = None) -> None:
    """Add the features and labels names as inputs (where the spec writes them), so a clash
    with inputs, lets, outputs or functions is reported like any other. `named`: the
    `data:` key, where a missing key is shown."""
    if node is None:
        return
    data = expect_map(node, "data", "a mapping with load, features and labels")
    check_keys(data, "data", DATA, named=named)
    for key in ("features", "labels"):
        value = data.get(key)
        names.add(expect_name(value, sub("data", key)), "input", value, sub("data", key))


def build_data(node: YNode | None, builder, train: YNode | None,
               ) -> tuple[DataSpec | None, dict[str, InputSpec]]:
    """The DataSpec and the two inputs holding epoch 0's first training batch.

    `builder` is the spec's InputBuilder (dtype, seed, base_dir and the element count);
    `train` is the raw train section, read only for its batch_size.
    """
    if node is None:
        return None, {}
    from gradcli import data as rows  # csv and the loaders: specs with data: only
    data = expect_map(node, "data")  # declare_names checked its keys and names
    features, labels = data.get("features").value, data.get("labels").value
    test = _test(optional(data, "test"))
    standardize_node = optional(data, "standardize")
    standardize = (expect_bool(standardize_node, "data.standardize")
                   if standardize_node is not None else False)
    loaded, source, path = _load(data, features, labels, builder.base_dir)
    n = len(loaded.y)
    if n == 0:
        raise fail(data.get("load"), "data.load", "the data set has no rows")
    if n - rows.held_out(n, test) < 1:
        raise fail(data.get("test"), "data.test",
                   f"with {n} rows, test: {test:g} leaves no row for training",
                   "lower test")
    spec = DataSpec(features, labels, loaded.x, loaded.y, test, standardize, source,
                    data.mark.location(), path)
    parts = _placed(lambda: rows.prepare(spec, builder.seed, builder.dtype), data.get("load"),
                    "data.load")  # a column that overflows when scaled or cast
    x_batch, y_batch = next(rows.batches(parts, _batch_size(train), builder.seed, 0))
    inputs = {}
    for key, name, value in (("features", features, x_batch), ("labels", labels, y_batch)):
        name_node = data.get(key)
        builder.count(value.size, name_node, sub("data", key))
        inputs[name] = InputSpec(name, Made(value.copy()), False, name_node.mark.location(), path)
    return spec, inputs


def _test(node: YNode | None) -> float:
    if node is None:
        return 0.0
    value = number_value(node, "data.test")
    if value is None or isinstance(value, bool) or not 0 <= value < 1:
        shown = describe(node) if value is None else f"{value:g}"
        raise fail(node, "data.test", f"test is the held-out share of the rows: a number in "
                                      f"[0, 1), got {shown}", "e.g. test: 0.25")
    return float(value)


def _batch_size(train: YNode | None) -> int | None:
    """train.batch_size as written (the train section itself is checked by its builder)."""
    if not isinstance(train, Map):
        return None
    node = optional(train, "batch_size")
    if node is None:
        return None
    return expect_int(node, "train.batch_size", minimum=1, maximum=MAX_BATCH)


def _load(data: Map, features: str, labels: str, base_dir: Path):
    """(Loaded, source name, the file read or None), every problem placed in the spec."""
    from gradcli import data as rows  # csv and the loaders: specs with data: only
    node = data.get("load")
    label_node = optional(data, "label")
    if isinstance(node, Map):
        check_keys(node, "data.load", DATA_LOAD, named=data.key_mark("load"))
        _no_label(label_node, "a bundled dataset")
        name_node = node.get("dataset")
        name = expect_choice(name_node, "data.load.dataset", rows.DATASETS)
        return _placed(lambda: rows.load_bundled(name), name_node, "data.load.dataset"), name, None
    if not isinstance(node, Scalar) or node.kind != "str":
        raise fail(node, "data.load", f"expected a .csv or .npz file name or {{dataset: NAME}}, "
                                      f"got {describe(node)}", "e.g. load: {dataset: iris}")
    text = node.value
    kind = next((k for k in FILE_KINDS if text.endswith(k)), None)
    if kind is None:
        raise fail(node, "data.load", f"data loads a .csv or .npz file, got {text!r}",
                   f"or a bundled set: {{dataset: {' | '.join(rows.DATASETS)}}}")
    from gradcli.spec import npz  # zipfile only for specs that load files
    path = npz.resolve(text, base_dir, node, "data.load", suffix=kind)
    if kind == ".csv":
        label = expect_str(label_node, "data.label") if label_node is not None else None
        def load_csv():
            text_data = _read_text(path, node)
            return _placed(lambda: rows.parse_csv(text_data, label), node, "data.load",
                           label_node if label is not None else None)
        return shared(("csv", path, label), load_csv), path.name, path
    _no_label(label_node, "a .npz file (its arrays are named by features: and labels:)")
    return shared(("npz", path, features, labels),
                       lambda: _load_npz(data, node, path, features, labels)), path.name, path


def _load_npz(data: Map, node: Scalar, path: Path, features: str, labels: str):
    from gradcli import data as rows  # csv and the loaders: specs with data: only
    from gradcli.spec import npz  # zipfile only for specs that load files
    arrays = {}
    for key, wanted in (("features", features), ("labels", labels)):
        name, shape, dtype = npz.read_header(path, wanted, node, data.get(key), "data.load")
        if int(np.prod(shape)) > rows.MAX_CELLS:  # checked before the data is read
            raise fail(node, "data.load", f"array {name!r} has shape {list(shape)}; a data "
                                          f"set holds at most {rows.MAX_CELLS} values")
        arrays[key] = npz.load_array(path, name, node, "data.load", (shape, dtype))
    return _placed(lambda: rows.from_arrays(arrays["features"], arrays["labels"], features,
                                            labels), node, "data.load")


def _no_label(label_node: YNode | None, what: str) -> None:
    if label_node is not None:
        raise fail(label_node, "data.label", f"label names a csv column; {what} has none",
                   "remove label:")


def _placed(load, node: YNode, key: str, label_node: YNode | None = None):
    """load(), with a DataError placed at `node` (at label: when it is about the label)."""
    from gradcli import data as rows  # csv and the loaders: specs with data: only
    try:
        return load()
    except rows.DataError as exc:
        if label_node is not None and exc.about == "label":
            raise fail(label_node, "data.label", exc.message, exc.hint) from None
        raise fail(node, key, exc.message, exc.hint) from None


def _read_text(path: Path, node: Scalar) -> str:
    """The csv file's text: a regular file, at most MAX_CSV_BYTES, UTF-8."""
    from gradcli import data as rows  # csv and the loaders: specs with data: only
    try:
        raw = read_regular(path, rows.MAX_CSV_BYTES)
    except NotRegular as exc:
        raise fail(node, "data.load", f"{path.name} is {exc.kind}, not a .csv file") from None
    except TooLarge:
        raise fail(node, "data.load", f"{path.name} is larger than the limit of "
                                      f"{rows.MAX_CSV_BYTES >> 20} MiB for a csv file") from None
    except OSError as exc:
        raise fail(node, "data.load", f"cannot read {path.name}: {exc.strerror or exc}") \
            from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise fail(node, "data.load", f"{path.name} is not UTF-8 text (byte {exc.start})") \
            from None

