"""A hostile .npz: the array whose header was checked is the array that is read, and nothing
else in the archive is ever loaded (members are opened and read by gradcli, not np.load)."""
from __future__ import annotations

import io
import warnings
import zipfile

import numpy as np
import pytest

from gradcli.errors import SpecError
from gradcli.spec import load_spec, npz


def _npy(array: np.ndarray) -> bytes:
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=False)
    return buffer.getvalue()


def _archive(path, members):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about a duplicate name
        with zipfile.ZipFile(path, "w") as archive:
            for name, data in members:
                archive.writestr(name, data)


def _input_spec(tmp_path, load: str):
    path = tmp_path / "spec.yaml"
    path.write_text(f"inputs:\n  x: {{{load}}}\noutputs:\n  y: sum(x)\n")
    return path


def _refused(path) -> str:
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.line is not None
    return info.value.bare_message


@pytest.mark.parametrize("decoy", [
    _npy(np.arange(50.0)),                  # a larger array than the header checked
    _npy(np.array(["abc", "def"])),         # a string array: dtype never checked
    b"raw bytes, not an array",
])
def test_a_member_named_like_the_key_is_refused_not_read(tmp_path, decoy):
    # np.load(f)["x"] reads member 'x' before 'x.npy'; the header read was x.npy's.
    _archive(tmp_path / "a.npz", [("x.npy", _npy(np.zeros(2))), ("x", decoy)])
    message = _refused(_input_spec(tmp_path, "load: a.npz, key: x"))
    assert "holds a member 'x' that is not a .npy array" in message


def test_a_member_written_twice_is_refused(tmp_path):
    _archive(tmp_path / "a.npz", [("x.npy", _npy(np.zeros(2))), ("x.npy", _npy(np.zeros(50)))])
    assert "holds the member 'x.npy' twice" in _refused(_input_spec(tmp_path, "load: a.npz"))


def test_the_data_section_refuses_the_same_decoy(tmp_path):
    _archive(tmp_path / "d.npz", [("F.npy", _npy(np.zeros((3, 2)))), ("t.npy", _npy(np.zeros(3))),
                                  ("F", _npy(np.zeros((40, 2))))])
    path = tmp_path / "spec.yaml"
    path.write_text("data: {load: d.npz, features: F, labels: t}\ninputs:\n  w: [1.0, 1.0]\n"
                    "outputs:\n  loss: sum(matmul(F, w))\n")
    assert "holds a member 'F' that is not a .npy array" in _refused(path)


def test_an_array_that_is_not_the_checked_header_is_refused(tmp_path):
    # The file changed between read_header and load_array: its data is never read.
    _archive(tmp_path / "a.npz", [("x.npy", _npy(np.zeros(50)))])
    with pytest.raises(SpecError, match="changed while it was being read"):
        npz.load_array(tmp_path / "a.npz", "x", None, "inputs.x.load",
                       ((2,), np.dtype(np.float64)))


def test_a_truncated_array_is_a_user_error(tmp_path):
    data = _npy(np.arange(10.0))
    _archive(tmp_path / "a.npz", [("x.npy", data[:-16])])
    assert "is truncated" in _refused(_input_spec(tmp_path, "load: a.npz"))


@pytest.mark.parametrize("array", [
    np.asfortranarray(np.arange(12.0).reshape(3, 4)),
    np.arange(6, dtype=">i4").reshape(2, 3),
    np.array([True, False, True]),
    np.array(2.5),
    np.zeros((0, 3)),
])
def test_arrays_read_as_numpy_reads_them(tmp_path, array):
    np.savez(tmp_path / "a.npz", x=array)
    with np.load(tmp_path / "a.npz", allow_pickle=False) as oracle:
        expected = oracle["x"]
    value = npz.load_array(tmp_path / "a.npz", "x", None, "k", (expected.shape, expected.dtype))
    assert value.dtype == expected.dtype and value.shape == expected.shape
    np.testing.assert_array_equal(value, expected)
    value[...] = 0  # writable, as np.load's arrays are
