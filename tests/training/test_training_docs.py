"""docs/training.md's examples run and say what they print."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "training.md").read_text()
BLOCKS = re.findall(r"```(yaml|python)\n(.*?)```", DOC, re.S)
YAML = [code for lang, code in BLOCKS if lang == "yaml"]
PYTHON = [code for lang, code in BLOCKS if lang == "python"]


def test_the_yaml_and_python_examples_run(tmp_path, monkeypatch, capsys):
    shutil.copy(ROOT / "experiments" / "data" / "two_blobs.csv", tmp_path)
    (tmp_path / "blobs_train.yaml").write_text(YAML[0])
    monkeypatch.chdir(tmp_path)
    exec(compile(PYTHON[0], "training.md", "exec"), {})
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "18 6 [0, 6, 12, 18]"
    assert lines[1].startswith("[0.3333333333333333, 1.0, 1.0, 1.0]")
    assert lines[2].startswith("0.3994")
    exec(compile(PYTHON[1], "training.md", "exec"), {})
    start = float(np.sum(np.square(np.sin([0.4, -1.2, 2.0]) * 3.0 - 1.0)))
    assert 0 < float(capsys.readouterr().out) < start - 1  # six rmsprop steps lowered it
