"""Load one array from a .npz file beside the spec, safely.

Only relative paths that stay inside the spec's directory (after following
symlinks) are read; the array's header is checked for size and dtype before
its data is decompressed, and nothing is ever unpickled.

The data is read here rather than with np.load: np.load(...)[name] may pick a
member other than the `name.npy` whose header was checked (a member named plain
`name` wins), and np.lib.format.read_array would read a header again. So every
member must be a `.npy` array with a unique name, and load_array reads the
header and exactly the bytes it promises from one stream, after checking that
header is the one its caller already checked.
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
    if "\x00" in text:  # the OS cannot name such a file; Path would raise ValueError later
        raise fail(node, key, f"load path {text!r} holds a NUL character; no file has "
                              "such a name")
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


def _names(archive: zipfile.ZipFile, path: Path, node: Scalar, key: str) -> list[str]:
    """The archive's array names; an archive that could be read two ways is refused."""
    members = archive.namelist()
    odd = [m for m in members if not m.endswith(".npy")]
    if odd:
        raise fail(node, key, f"{path.name} holds a member {odd[0]!r} that is not a .npy array; "
                              "write the file with numpy.savez")
    if len(set(members)) != len(members):
        twice = next(m for m in members if members.count(m) > 1)
        raise fail(node, key, f"{path.name} holds the member {twice!r} twice")
    return [m[:-4] for m in members]


def _header(member, path: Path, node: Scalar, key: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    """(shape, fortran order, dtype) of a .npy stream, leaving it at the data."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(member)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(member)
    raise fail(node, key, f"{path.name}: .npy format {version} is not supported")


def read_header(path: Path, wanted: str | None, node: Scalar, key_node, key: str,
                ) -> tuple[str, tuple[int, ...], np.dtype]:
    """(array name, shape, dtype) of the chosen array, read without loading its data."""
    handle = _open(path, node, key)
    try:
        with handle, zipfile.ZipFile(handle) as archive:
            names = _names(archive, path, node, key)
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
                shape, _, dtype = _header(member, path, node, key)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise fail(node, key, f"cannot read {path.name} as a .npz file: {exc}") from None
    if dtype.kind not in _KINDS or dtype.fields is not None or dtype.subdtype is not None:
        raise fail(node, key, f"array {wanted!r} in {path.name} has dtype {dtype}; only bool, "
                              "integer and float arrays can be inputs")
    return wanted, tuple(shape), dtype


def load_array(path: Path, name: str, node: Scalar, key: str,
               header: tuple[tuple[int, ...], np.dtype]) -> np.ndarray:
    """The data of member `name.npy`, whose (shape, dtype) read_header returned as `header`
    (the file is refused if it no longer says so); no pickles; failures are SpecErrors."""
    handle = _open(path, node, key)
    try:
        with handle, zipfile.ZipFile(handle) as archive:
            _names(archive, path, node, key)
            with archive.open(name + ".npy") as member:
                shape, fortran, dtype = _header(member, path, node, key)
                if (tuple(shape), dtype) != (tuple(header[0]), header[1]):
                    raise fail(node, key, f"{path.name} changed while it was being read")
                value = np.empty(shape, dtype=dtype, order="F" if fortran else "C")
                view = memoryview(value.reshape(-1, order="A").view(np.uint8))
                filled = 0
                while filled < len(view):
                    got = member.readinto(view[filled:])
                    if not got:
                        raise fail(node, key, f"array {name!r} in {path.name} is truncated "
                                              f"({filled} of {len(view)} bytes)")
                    filled += got
    except (zipfile.BadZipFile, OSError, ValueError, EOFError, KeyError) as exc:
        raise fail(node, key, f"cannot read array {name!r} from {path.name}: {exc}") from None
    return value
