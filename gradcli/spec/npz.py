"""Load one array from a .npz file beside the spec, safely.

Only relative paths that stay inside the spec's directory (after following
symlinks) are read; the array's header is checked for size and dtype before
its data is decompressed, and nothing is ever unpickled.
"""
from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

from gradcli.errors import did_you_mean
from gradcli.spec.document import Scalar
from gradcli.spec.fields import fail
from gradcli.spec.files import NotRegular, kind_of, open_regular

_KINDS = "biuf"  # bool, signed, unsigned, float: what a tensor can hold


def resolve(text: str, base_dir: Path, node: Scalar, key: str, suffix: str = ".npz") -> Path:
    """The file `text` names, relative to `base_dir`, refusing anything that leaves it.

    data: loads .csv files by the same rules (suffix=".csv"); its caller checks the suffix."""
    if suffix == ".npz" and not text.endswith(".npz"):
        raise fail(node, key, f"load takes a .npz file (numpy.savez), got {text!r}")
    relative = Path(text)
    if relative.is_absolute() or text.startswith(("~", "/", "\\")):
        raise fail(node, key, f"load path {text!r} is absolute; give a path relative to the "
                              "spec's directory")
    try:
        base = base_dir.resolve()
        target = (base / relative).resolve()
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
        raise fail(node, key, f"cannot resolve the load path {text!r}: {exc}") from None
    if not target.is_relative_to(base):
        raise fail(node, key, f"load path {text!r} leaves the spec's directory "
                              "(through '..' or a symlink); keep data files beside the spec")
    try:
        kind = kind_of(target.stat().st_mode)  # stat never blocks, even on a FIFO
    except FileNotFoundError:
        raise fail(node, key, f"the file {text!r} does not exist in the spec's directory "
                              f"({base})") from None
    except OSError as exc:
        raise fail(node, key, f"cannot read the load path {text!r}: {exc.strerror or exc}") \
            from None
    if kind is not None:
        raise fail(node, key, f"load path {text!r} is {kind}, not a {suffix} file")
    return target


def _open(path: Path, node: Scalar, key: str):
    """The file, opened without blocking; a FIFO swapped in since resolve() is refused too."""
    try:
        return open_regular(path)
    except NotRegular as exc:
        raise fail(node, key, f"{path.name} is {exc.kind}, not a .npz file") from None
    except OSError as exc:
        raise fail(node, key, f"cannot open {path.name}: {exc.strerror or exc}") from None


def read_header(path: Path, wanted: str | None, node: Scalar, key_node, key: str,
                ) -> tuple[str, tuple[int, ...], np.dtype]:
    """(array name, shape, dtype) of the chosen array, read without loading its data."""
    handle = _open(path, node, key)
    try:
        with handle, zipfile.ZipFile(handle) as archive:
            names = [n[:-4] for n in archive.namelist() if n.endswith(".npy")]
            if wanted is None:
                if len(names) != 1:
                    raise fail(node, key, f"{path.name} holds {len(names)} arrays "
                                          f"({', '.join(names) or 'none'}); choose one with key:")
                wanted = names[0]
            elif wanted not in names:
                raise fail(key_node, key, f"{path.name} has no array {wanted!r}; it holds "
                                          f"{', '.join(names) or 'none'}",
                           did_you_mean(wanted, names))
            with archive.open(wanted + ".npy") as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(member)
                else:
                    raise fail(node, key, f"{path.name}: .npy format {version} is not supported")
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise fail(node, key, f"cannot read {path.name} as a .npz file: {exc}") from None
    if dtype.kind not in _KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise fail(node, key, f"array {wanted!r} in {path.name} has dtype {dtype}; only bool, "
                              "integer and float arrays can be inputs")
    return wanted, tuple(shape), dtype


def load_array(path: Path, name: str, node: Scalar, key: str) -> np.ndarray:
    """The array's data (no pickles); every failure is a located SpecError."""
    handle = _open(path, node, key)
    try:
        with handle, np.load(handle, allow_pickle=False) as data:
            return np.asarray(data[name])
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as exc:
        raise fail(node, key, f"cannot read array {name!r} from {path.name}: {exc}") from None
