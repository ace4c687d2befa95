"""run's parts drawn without rich (render_plain) are what rich prints off a terminal, byte for byte.

Each part of render_parts is rendered both ways: by render_plain.part_text, and by rich through
render_parts.to_rich on a console as cli_common.consoles makes it off a terminal. Where the plain
renderer answers, the two must be equal; where it declines (None), rich draws the part.
"""
from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from rich.console import Console

from gradcli import render, runner
from gradcli.render_parts import SECTION, PanelPart, TablePart, TextPart, to_rich
from gradcli.render_plain import part_text
from gradcli.spec import load_spec

ROOT = Path(__file__).resolve().parents[2]


def rich_text(part, width: int) -> str:
    file = io.StringIO()
    Console(file=file, width=width, highlight=False).print(to_rich(part))
    return file.getvalue()


def same_or_declined(part, width: int = 240) -> bool:
    """True when the plain renderer drew the part; it must then be rich's output."""
    text = part_text(part, width)
    if text is not None:
        assert text == rich_text(part, width), part
    return text is not None


@pytest.mark.parametrize("spec", sorted(p.name for p in (ROOT / "experiments").glob("*.yaml")))
def test_every_bundled_experiment_is_drawn_as_rich_draws_it(spec):
    result = runner.run(load_spec(ROOT / "experiments" / spec), numeric=True)
    parts = render.result_parts(result)
    drawn = [same_or_declined(part) for part in parts]
    for width in (60, 100):  # narrower consoles: panels and captions wrap, tables decline
        for part in parts:
            same_or_declined(part, width)
    if spec == "ste_sign_quantize_grad.yaml":  # the demo (bench W6) needs no rich at all
        assert all(drawn)


def test_demo_run_prints_the_same_with_and_without_rich(monkeypatch):
    """The whole `run` output: plain parts, then every part through rich (as on a terminal
    before this renderer existed, less the colours)."""
    result = runner.run(load_spec(ROOT / "experiments" / "ste_sign_quantize_grad.yaml"))
    parts = render.result_parts(result)
    plain = "".join(part_text(part, 240) for part in parts)
    file = io.StringIO()
    console = Console(file=file, width=240, highlight=False)
    for renderable in render.result_renderables(result):
        console.print(renderable)
    assert plain == file.getvalue()
    assert "overridden vs true" in plain and "expect: passed" in plain


WORDS = ["a", "to", "sign", "gradient", "x" * 12, "straight-through", "(dy)", "1.5", "·", "→"]


def sentence(rng: random.Random, n: int) -> str:
    return (" " * rng.choice([1, 1, 1, 2])).join(rng.choice(WORDS) for _ in range(n))


def test_panels_wrap_where_rich_wraps():
    rng = random.Random(14)
    drawn = 0
    for _ in range(300):
        lines = [[(sentence(rng, rng.randint(0, 60)), "bold"), ("  ", ""),
                  (sentence(rng, rng.randint(0, 30)), "italic")],
                 [(sentence(rng, rng.randint(1, 10)), "dim")]]
        width = rng.choice([20, 40, 80, 240])
        drawn += same_or_declined(PanelPart(lines), width)
    assert drawn > 250  # wrapping is drawn, not declined


def test_tables_with_titles_captions_sections_and_right_columns():
    rng = random.Random(10)
    drawn = 0
    for _ in range(300):
        ncols = rng.randint(1, 5)
        columns = [(rng.choice(["name", "value", "max|o−t|", "‖o‖", "x"]), rng.choice(["left", "right"]),
                    rng.choice(["", "bold"])) for _ in range(ncols)]
        rows = []
        for _ in range(rng.randint(0, 6)):
            if rng.random() < 0.25:
                rows.append(SECTION)
            else:
                texts = ["", "-1", "0.2857", "∞", "[0, 1]", "None", "x" * rng.randint(0, 30)]
                rows.append([(rng.choice(texts), rng.choice(["", "dim", "yellow"]))
                             for _ in range(ncols)])
        title = rng.choice(["", "values", "gradients of a_rather_long_output_name"])
        caption = rng.choice(["", sentence(rng, rng.randint(1, 40)), "n numeric (NaN: there are none)"])
        width = rng.choice([30, 60, 120, 240])
        drawn += same_or_declined(TablePart(title, columns, rows, caption), width)
    assert drawn > 100


def test_texts_and_what_is_declined():
    for pieces, style in [([("expect: passed", "")], "bold green"),
                          ([("expect: FAILED\n", ""), ("  y: got 1, want 2\n", "red")], "bold red"),
                          ([("warning: a\nwarning: b", "")], "yellow"),
                          ([("non-finite: ", "bold red"), ("log(x)", "bold"), ("  s.yaml:3:4", "red")], "")]:
        assert same_or_declined(TextPart(pieces, style))
    assert part_text(TextPart([("x" * 240, "")]), 240) is None  # rich would wrap it
    assert part_text(TextPart([("wide 漢字", "")]), 240) is None  # two cells a character
    assert part_text(PanelPart([[("tab\there", "")]]), 240) is None
    assert part_text(PanelPart([[("y" * 300, "")]]), 240) is None  # a word rich would fold
    columns = [("h", "left", "")]
    assert part_text(TablePart("", columns, []), 240) is None  # rich draws an empty table
    assert part_text(TablePart("", [("[b]h[/b]", "left", "")], [[("1", "")]]), 240) is None  # markup
    assert part_text(TablePart("", columns, [[("1", "")]], caption="a :smile: b"), 240) is None
    # a title wider than the columns: rich widens the columns (min_width)
    assert part_text(TablePart("a long title", columns, [[("1", "")]]), 240) is None
    assert part_text("a rich renderable", 240) is None
