"""Start-up: each command imports only what it uses (issue 14, "the cold path").

Each case runs the command in a fresh interpreter and lists the heavy packages it left in
sys.modules, so an eager import added back at module level fails here, without timing.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = "experiments/ste_sign_quantize_grad.yaml"
HEAVY = ("numpy", "rich", "yaml", "torch", "jax", "tensorflow", "matplotlib", "dask")

PROBE = """
import sys
sys.argv = ["gradcli", *sys.argv[1:]]
from gradcli.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & set(%r))
ours = sorted(m for m in sys.modules if m.startswith("gradcli."))
stdlib = sorted(m for m in sys.modules if "." not in m)
import json  # after the lists: json is one of the modules a command may not need
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "heavy": heavy, "ours": ours,
                                          "stdlib": stdlib}) + "\\n")
""" % (HEAVY,)


def probe(*args: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    line = proc.stderr.rsplit("\nPROBE ", 1)[-1]
    found = json.loads(line)
    found["stdout"] = proc.stdout
    return found


def run_python(code: str) -> str:
    """The stdout of `python -c code` in a fresh interpreter on this checkout."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60, check=True).stdout


@pytest.mark.parametrize("args", [["--help"], ["--version"], ["run", "--help"], ["list", "--help"]])
def test_help_imports_no_heavy_package(args):
    found = probe(*args)
    assert found["code"] == 0
    assert "Usage:" in found["stdout"] or "gradcli" in found["stdout"]
    assert found["heavy"] == []  # not even numpy: help needs click alone
    # nor the core, the spec model or the runner
    assert not [m for m in found["ours"] if m.split(".")[1] in {"core", "spec", "runner", "render",
                                                                   "backends", "ops", "lang"}]


def test_schema_needs_no_rich():
    found = probe("schema")
    assert found["code"] == 0
    assert json.loads(found["stdout"])["type"] == "object"
    assert found["heavy"] == []  # the op table's data without its kernels; not rich, not PyYAML
    assert not {"gradcli.core", "gradcli.runner", "gradcli.spec.load", "gradcli.spec.document",
                "gradcli.lang"} & set(found["ours"])


def test_check_does_not_build_or_run():
    found = probe("check", DEMO)
    assert found["code"] == 0
    assert found["stdout"].startswith(f"ok {DEMO} (")
    # PyYAML reads the spec; its literals are checked in plain Python (spec/arrays.py): no numpy
    assert found["heavy"] == ["yaml"]
    assert not {"gradcli.core", "gradcli.runner", "gradcli.backends", "gradcli.ops.kernels",
                "gradcli.render"} & set(found["ours"])
    # a spec without data: or sweep: needs neither the data loaders (csv) nor the sweep checks
    assert not {"gradcli.data", "gradcli.spec.sweepcheck", "gradcli.spec.npz", "gradcli.spec.data",
                "gradcli.spec.sweep"} & set(found["ours"])
    assert "csv" not in found["stdlib"]
    assert "json" not in found["stdlib"]  # spec/sweep.py's json only for a spec with sweep:


def test_check_of_the_bundled_experiments_needs_numpy_only_for_data():
    """Literals, draws, fills and ranges are checked without numpy; their arrays are made when
    a run asks. A `data:` section is read (and batched) by the check itself: numpy then."""
    specs = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "experiments").rglob("*.yaml"))
    specs += sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs" / "examples").rglob("*.yaml"))
    with_data = [s for s in specs if re.search(r"^data:", (ROOT / s).read_text(), re.M)]
    without = [s for s in specs if s not in with_data]
    assert len(without) >= 15 and len(with_data) >= 3  # the split is what the test is about
    found = probe("check", *without)
    assert found["code"] == 0 and found["stdout"].count("\nok ") == len(without) - 1
    assert found["heavy"] == ["yaml"]
    assert not {"gradcli.spec.data", "gradcli.data", "gradcli.spec.npz"} & set(found["ours"])
    found = probe("check", with_data[0])
    assert found["code"] == 0 and "numpy" in found["heavy"]


def test_check_of_a_load_input_reads_the_file_with_numpy(tmp_path):
    import numpy as np

    np.savez(tmp_path / "w.npz", w=np.arange(3.0))
    (tmp_path / "spec.yaml").write_text("inputs:\n  w: {load: w.npz}\noutputs:\n  y: sum(w)\n")
    found = probe("check", str(tmp_path / "spec.yaml"))
    assert found["code"] == 0 and found["heavy"] == ["numpy", "yaml"]


def test_list_ops_and_gradients_import_neither_core_nor_spec():
    for what in ("ops", "gradients", "backends"):
        found = probe("list", what)
        assert found["code"] == 0
        assert found["heavy"] == []  # not even numpy: the op table's data, no kernel, no rich
        assert not {"gradcli.core", "gradcli.spec", "gradcli.runner", "gradcli.cli_figures",
                    "gradcli.cli_sweep", "gradcli.ops.kernels"} & set(found["ours"])
        # backends: read from the installed metadata, no backend module imported
        assert not [m for m in found["ours"] if m.startswith("gradcli.backends.")], what
    assert "numpy 2." in found["stdout"] and "(bundled core)" in found["stdout"]


COMPILES = """
import builtins, json, re, sys
seen = []

def _who():
    # the gradcli module that asked, through any helper (ast.literal_eval compiles); the import
    # system's own compiling of a module's source (no cached bytecode) is not a compile it asked
    f = sys._getframe(2)
    while f is not None:
        name = f.f_globals.get("__name__", "")
        if name.startswith(("importlib", "_frozen_importlib")):
            return None
        if name.startswith("gradcli"):
            return name
        f = f.f_back
    return None

def counting(real, kind):
    def wrapper(*args, **kwargs):
        who = _who()
        if who:
            seen.append([kind, who])
        return real(*args, **kwargs)
    return wrapper

builtins.compile = counting(builtins.compile, "compile")
re.compile = counting(re.compile, "re.compile")
sys.argv = ["gradcli", *sys.argv[1:]]
from gradcli.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
sys.stderr.write("\\nPROBE " + json.dumps({"code": code, "seen": seen}) + "\\n")
"""


def compiles(*args: str) -> dict:
    """What gradcli compiled while running the command: [kind, module] per Python source
    (builtins.compile, also through ast.literal_eval) or regular expression (re.compile)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", COMPILES, *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=60)
    return json.loads(proc.stderr.rsplit("\nPROBE ", 1)[-1])


def test_the_demo_run_compiles_no_python_and_the_start_up_modules_no_regex():
    """Start-up costs that no import list shows: the op table reads its defaults without
    ast.literal_eval, printable escapes with a translate table, and the finite differences'
    14 replays of the demo run the schedule's loop instead of generating its source."""
    found = compiles("run", DEMO)
    assert found["code"] == 0
    assert [who for kind, who in found["seen"] if kind == "compile"] == []
    compiled_re = {who for kind, who in found["seen"] if kind == "re.compile"}
    assert "gradcli.printable" not in compiled_re
    assert not [who for who in compiled_re if who.startswith("gradcli.ops")]
    assert compiled_re  # the probe sees the regexes that remain (lang/tokens.py's, ...)


def test_run_imports_no_framework_and_no_other_command():
    found = probe("run", DEMO)
    assert found["code"] == 0
    assert not {"torch", "jax", "tensorflow", "matplotlib", "dask"} & set(found["heavy"])
    # off a terminal the tables are drawn without rich (render_plain; tests/cli/test_render_plain.py)
    assert "rich" not in found["heavy"]
    assert found["stdout"].startswith("╭") and "expect: passed" in found["stdout"]
    # compare's, plot's and sweep's machinery is not the demo's
    assert not {"gradcli.comparison", "gradcli.plot", "gradcli.sweep", "gradcli.curve",
                "gradcli.render_compare", "gradcli.render_sweep"} & set(found["ours"])
    # the numpy backend's availability is numpy's __version__ once imported: no metadata read
    # (importlib.metadata brings email, zipfile...: 10-30 ms, for `list backends` only)
    assert "email" not in found["stdlib"] and "zipfile" not in found["stdlib"]
    assert "json" not in found["stdlib"]  # only --format json and sweep: specs need it
    # the demo does not train: no optimizer, update rule or trainee is imported
    assert not {"gradcli.core.train", "gradcli.core.tf_updates", "gradcli.backends.numpy_train",
                "gradcli.backends.numpy_flat"} & set(found["ours"])
    # nor the data: and sweep: sections' readers (the demo has neither), nor --set's
    assert not {"gradcli.spec.data", "gradcli.spec.sweep", "gradcli.spec.overrides"} & set(found["ours"])
    # nor the train: builder (expect: is spec/expect.py), nor clipping (train.clip's)
    assert not {"gradcli.spec.training", "gradcli.core.clipping"} & set(found["ours"])
    assert "gradcli.spec.expect" in found["ours"]


def test_library_import_is_lazy_and_complete():
    """`import gradcli` alone loads no numpy; every public name of the core is still there."""
    code = ("import sys, gradcli as gc\n"
            "before = 'numpy' in sys.modules\n"
            "import gradcli.core as core\n"
            "lazy = 'gradcli.core.train' not in sys.modules  # gc.train: on first use\n"
            "missing = [n for n in core.__all__ if getattr(gc, n) is not getattr(core, n)]\n"
            "ns = {}\n"
            "exec('from gradcli import *', ns)\n"
            "star = sorted(set(core.__all__) - set(ns))\n"
            "x = gc.constant(3.0)\n"
            "g, = gc.gradients(gc.mul(x, x), [x])\n"
            "opt = gc.train.GradientDescentOptimizer(0.5)\n"
            "print(before, missing, star, float(gc.evaluate(g)), 'gradients' in dir(gc), lazy,\n"
            "      gc.train is core.train is sys.modules['gradcli.core.train'])\n")
    out = run_python(code).split()
    assert out == ["False", "[]", "[]", "6.0", "True", "True", "True"]


def test_clipping_on_first_use_leaves_the_clip_op_in_place():
    """core/clipping.py (clip_by_norm...) is imported on first use; gc.clip stays the op."""
    import numpy as np

    code = ("import sys, numpy as np, gradcli as gc, gradcli.core as core\n"
            "before = 'gradcli.core.clipping' in sys.modules\n"
            "x = gc.constant(np.array([3.0, 4.0]))\n"
            "c = gc.clip_by_norm(x, 1.0)\n"
            "print(before, 'gradcli.core.clipping' in sys.modules, callable(core.clip),\n"
            "      gc.clip is core.clip,\n"
            "      gc.evaluate(gc.clip(x, 0.0, 3.5)).tolist(), gc.evaluate(c).tolist())\n")
    out = run_python(code).split(" ", 4)
    assert out[:4] == ["False", "True", "True", "True"]
    x = np.array([3.0, 4.0])  # the oracle: np.clip, and x * clip_norm / ||x|| (tf.clip_by_norm)
    assert out[4].strip() == f"{np.clip(x, 0.0, 3.5).tolist()} {(x * 1.0 / np.sqrt(25.0)).tolist()}"


def test_importing_every_core_submodule_leaves_the_ops_in_place():
    """A plain `import gradcli.core.<m>` binds <m> on gradcli.core, over an op of that name
    (review6 4: `import gradcli.core.clip` made gc.clip a module): clipping is core/clipping.py,
    and gradcli.core.clip an alias of it that binds nothing. A fresh interpreter, so the
    import order is the user's."""
    import numpy as np

    code = ("import pkgutil, numpy as np, gradcli.core\n"
            "import gradcli.core.clip\n"
            "from gradcli.core.clip import clip_by_norm\n"
            "names = [m.name for m in pkgutil.iter_modules(gradcli.core.__path__)]\n"
            "for m in names: __import__('gradcli.core.' + m)\n"
            "gc = gradcli.core\n"
            "x = gc.constant(np.array([-3.0, 0.5, 4.0]))\n"
            "modules = [n for n in gc.__all__\n"
            "           if n != 'train' and type(getattr(gc, n)).__name__ == 'module']\n"
            "print(sorted(modules), clip_by_norm is gc.clip_by_norm,\n"
            "      gc.evaluate(gc.clip(x, -1.0, 1.0)).tolist())\n")
    out = run_python(code).split(" ", 2)
    assert out[:2] == ["[]", "True"]
    assert out[2].strip() == str(np.clip([-3.0, 0.5, 4.0], -1.0, 1.0).tolist())


def test_no_submodule_hides_a_public_name():
    """gradcli.__getattr__ looks for a submodule first: none may share a core name."""
    import pkgutil

    import gradcli
    import gradcli.core

    submodules = {m.name for m in pkgutil.iter_modules(gradcli.__path__)}
    assert "runner" in submodules and "gradients" in gradcli.core.__all__
    assert not submodules & set(gradcli.core.__all__)


def _rich_table(headers, rows, width=240) -> str:
    import io

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    file = io.StringIO()
    table = Table(show_header=True)
    for header in headers:
        table.add_column(header)
    for row in rows:
        table.add_row(*(Text(cell) for cell in row))
    Console(file=file, width=width, highlight=False).print(table)
    return file.getvalue()


@pytest.mark.parametrize("what", ["ops", "gradients", "backends"])
def test_plain_list_is_what_rich_prints(what):
    """The table drawn without rich is rich's, byte for byte (the output is a contract)."""
    from gradcli.cli import _list_rows
    from gradcli.render_plain import table_text

    headers, rows = _list_rows(what)
    text = table_text(headers, rows, 240)
    assert text is not None  # the fast path is taken for every subject today
    assert text == _rich_table(headers, rows)


def test_plain_table_gives_way_to_rich_when_rich_would_wrap_or_measure():
    from gradcli.render_plain import table_text

    for doc_width in range(220, 240):  # around the width where rich starts wrapping
        rows = [["a", "x" * doc_width], ["bb", "y"]]
        text = table_text(["h", "doc"], rows, 240)
        assert text is None or text == _rich_table(["h", "doc"], rows)
    assert table_text(["h", "doc"], [["a", "x" * 240]], 240) is None
    assert table_text(["h"], [["wide 漢字"]], 240) is None  # two cells a character: rich measures
    assert table_text(["h"], [["tab\there"]], 240) is None
    assert table_text(["h"], [], 240) is None


def test_list_on_a_forced_colour_terminal_is_still_rich():
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FORCE_COLOR": "1"}
    out = subprocess.run([sys.executable, "-m", "gradcli", "list", "gradients"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    assert "\x1b[1m" in out and "identity" in out  # bold headers: rich drew it
    found = probe("list", "gradients")
    assert "rich" not in found["heavy"] and "\x1b[" not in found["stdout"]


def test_plain_ok_line_is_what_rich_prints():
    import io

    from rich.console import Console
    from rich.text import Text

    from gradcli.render_plain import plain_line

    for line in ["ok experiments/a.yaml (a)", "ok " + "d/" * 117 + "x (y)", "ok a  b (c)",
                 "ok " + "p" * 236, "ok " + "p" * 237, "ok x (é)", "ok x (y) "]:
        file = io.StringIO()
        Console(file=file, width=240, highlight=False).print(Text.assemble(("ok ", "green"), line[3:]))
        if plain_line(line, 240):
            assert file.getvalue() == line + "\n"
    assert not plain_line("ok " + "p" * 237, 240) and not plain_line("ok x (y) ", 240)
