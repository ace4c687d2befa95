"""The sweep: block, --param and --seeds: which runs a sweep makes, and the errors for bad ones."""
import pytest

from gradcli.errors import GradcliError, SpecError
from gradcli.spec import load_spec_text
from gradcli.spec.document import Source, compose
from gradcli.spec.sweep import build_sweep, parse_param, set_text
from gradcli.sweep.grid import axes, grid, parse_seeds

BASE = """\
inputs: {x: [1.0, 2.0]}
outputs: {y: sum(x * x)}
"""


def sweep_of(text):
    return build_sweep(compose(Source("s.yaml", BASE + text)).get("sweep"))


def runs(text, params=(), seeds=None):
    g = grid(axes(sweep_of(text), [parse_param(p) for p in params],
                  None if seeds is None else parse_seeds(seeds)))
    return g.keys, [r.params for r in g.runs], [r.id for r in g.runs]


def test_grid_is_every_combination_last_key_fastest():
    keys, params, ids = runs("sweep:\n  seed: [0, 1, 2]\n  train.optimizer.lr: [0.01, 0.1]\n")
    assert keys == ("seed", "train.optimizer.lr")
    assert params == [{"seed": s, "train.optimizer.lr": lr} for s in (0, 1, 2) for lr in (0.01, 0.1)]
    assert ids == ["0", "1", "2", "3", "4", "5"]


def test_zip_takes_lists_element_by_element_and_is_one_axis_of_the_grid():
    keys, params, _ = runs("sweep:\n  zip: {train.steps: [1, 2], inputs.c.value: [0.5, 1.5]}\n"
                           "  seed: [0, 1]\n")
    assert keys == ("train.steps", "inputs.c.value", "seed")
    assert params == [{"train.steps": 1, "inputs.c.value": 0.5, "seed": 0},
                      {"train.steps": 1, "inputs.c.value": 0.5, "seed": 1},
                      {"train.steps": 2, "inputs.c.value": 1.5, "seed": 0},
                      {"train.steps": 2, "inputs.c.value": 1.5, "seed": 1}]


def test_param_replaces_a_key_in_place_and_adds_new_keys_at_the_end():
    keys, params, _ = runs("sweep:\n  a.b: [1, 2]\n  seed: [0]\n",
                           params=["a.b=5,6,7", "override_map.sign=identity,hardtanh"])
    assert keys == ("a.b", "seed", "override_map.sign")
    assert [p["a.b"] for p in params][::2] == [5, 5, 6, 6, 7, 7][::2]
    assert len(params) == 6 and params[1]["override_map.sign"] == "hardtanh"


def test_param_values_are_yaml_so_lists_and_strings_survive():
    axis = parse_param("inputs.x=[1, 2],[3, 4]")
    assert axis.values == (([1, 2],), ([3, 4],))
    assert set_text("inputs.x", [1, 2]) == "inputs.x=[1, 2]"
    assert set_text("override_map.sign", "identity") == 'override_map.sign="identity"'


def test_param_out_of_a_zip_leaves_the_zips_other_keys():
    keys, params, _ = runs("sweep:\n  zip: {a: [1, 2], b: [3, 4]}\n", params=["a=9"])
    assert keys == ("a", "b") and params == [{"a": 9, "b": 3}, {"a": 9, "b": 4}]


@pytest.mark.parametrize("text,seeds", [("3", [0, 1, 2]), ("2:5", [2, 3, 4])])
def test_seeds_is_pythons_range_and_replaces_the_specs_seeds(text, seeds):
    keys, params, _ = runs("sweep:\n  seed: [7, 8]\n", seeds=text)
    assert keys == ("seed",) and [p["seed"] for p in params] == seeds


@pytest.mark.parametrize("text", ["0", "5:5", "x", "-2:3", "1:2:3"])
def test_bad_seeds_are_refused(text):
    with pytest.raises(GradcliError):
        parse_seeds(text)


@pytest.mark.parametrize("block,line,words", [
    ("sweep:\n  seed: 3\n", 4, "expected a list of values"),
    ("sweep:\n  seed: []\n", 4, "empty"),
    ("sweep:\n  zip: {a: [1, 2], b: [1]}\n", 4, "has 1 values; the zip's first key has 2"),
    ("sweep:\n  sweep.seed: [1]\n", 4, "cannot vary 'sweep'"),
    ("sweep:\n  a..b: [1]\n", 4, "not a dotted key"),
    ("sweep: [1, 2]\n", 3, "expected a mapping"),
])
def test_a_bad_sweep_block_is_a_located_spec_error_even_for_run_and_check(block, line, words):
    with pytest.raises(SpecError) as info:
        load_spec_text(BASE + block, path="s.yaml")
    assert words in str(info.value) and f"s.yaml:{line}:" in str(info.value)


def test_nothing_to_sweep_is_refused():
    with pytest.raises(GradcliError, match="nothing to sweep"):
        runs("")


@pytest.mark.parametrize("text", ["lr", "=1,2", "a..b=1"])
def test_bad_param_is_refused(text):
    with pytest.raises(SpecError):
        parse_param(text)


def test_the_schema_knows_the_sweep_block():
    jsonschema = pytest.importorskip("jsonschema")
    import yaml

    from gradcli.spec import json_schema

    validator = jsonschema.Draft202012Validator(json_schema())
    spec = yaml.safe_load(BASE + "sweep:\n  seed: [0, 1]\n  zip: {a.b: [1, 2], c: [3, 4]}\n")
    assert list(validator.iter_errors(spec)) == []
    spec["sweep"]["seed"] = []
    assert [tuple(e.absolute_path) for e in validator.iter_errors(spec)] == [("sweep", "seed")]
