"""Each mapping's keys are declared once (spec/sections.py): the loader and the schema agree."""
from __future__ import annotations

import copy

import jsonschema
import pytest
import yaml
from spec_samples import SPEC_V1_EXAMPLE

from gradcli.errors import SpecError
from gradcli.spec import json_schema, load_spec_text
from gradcli.spec.sections import SECTIONS

VALIDATOR = jsonschema.Draft202012Validator(json_schema())


SCHEDULE_PARAMS = {"cosine": {"steps": 10}, "step": {"every": 2, "gamma": 0.5},
                   "exponential": {"gamma": 0.9}}


def example(path: str = "") -> dict:
    """The spec-v1 example, with override_map in its list form, a data section, a metric
    expected at the end (expect.train.final) and a learning-rate schedule (of the kind `path`
    names, when it names one), so every section is present."""
    doc = yaml.safe_load(SPEC_V1_EXAMPLE)
    doc["override_map"] = [{"op": "sign", "gradient": "QuantizeGrad"}]
    doc["data"] = {"load": {"dataset": "iris"}, "features": "dx", "labels": "dy", "test": 0.2}
    kind = path.split(".")[2] if path.startswith("train.schedule.") else "cosine"
    doc["train"]["schedule"] = {kind: dict(SCHEDULE_PARAMS[kind])}
    doc["train"]["metrics"] = {"total": "y"}
    doc["expect"]["train"]["final"] = {"loss": 12.0, "total": {"train": 12.0, "test": 12.0}}
    return doc


def _branch(node: dict, kind: str) -> dict:
    if node.get("type") == kind:
        return node
    return next(b for b in node.get("anyOf", []) if b.get("type") == kind)


def schema_object(path: str) -> dict:
    """The schema of the mapping at a Section path ("" top, "inputs.*", "override_map[]")."""
    node = json_schema()
    for part in filter(None, path.split(".")):
        name = part.removesuffix("[]")
        obj = _branch(node, "object")
        node = obj["additionalProperties"] if name == "*" else obj["properties"][name]
        if part.endswith("[]"):
            node = _branch(node, "array")["items"]
    return _branch(node, "object")


def mapping_at(doc: dict, path: str) -> dict:
    """The example's mapping at a Section path ('*' takes the first entry, '[]' the first item)."""
    node = doc
    for part in filter(None, path.split(".")):
        name = part.removesuffix("[]")
        node = next(v for v in node.values() if isinstance(v, dict)) if name == "*" else node[name]
        if part.endswith("[]"):
            node = node[0]
    return node


def loader_error(doc: dict) -> SpecError | None:
    try:
        load_spec_text(yaml.safe_dump(doc, sort_keys=False), path="spec.yaml")
    except SpecError as exc:
        return exc
    return None


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.path or "top")
def test_the_schema_lists_exactly_the_loaders_keys(section):
    schema = schema_object(section.path)
    assert list(schema["properties"]) == list(section.keys)
    assert schema.get("required", []) == list(section.required)
    assert schema["additionalProperties"] is False


def test_the_example_with_every_section_passes_both():
    doc = example()
    assert loader_error(doc) is None
    assert list(VALIDATOR.iter_errors(doc)) == []


@pytest.mark.parametrize("section", SECTIONS, ids=lambda s: s.path or "top")
def test_an_unknown_key_is_refused_by_both(section):
    doc = example(section.path)
    mapping_at(doc, section.path)["zzz_unknown"] = 1
    assert list(VALIDATOR.iter_errors(doc)) != []
    error = loader_error(doc)
    assert error is not None and "'zzz_unknown'" in error.bare_message


@pytest.mark.parametrize("section, key", [(s, k) for s in SECTIONS for k in s.required],
                         ids=lambda v: getattr(v, "path", v) or "top")
def test_a_missing_required_key_is_refused_by_both(section, key):
    doc = example(section.path)
    mapping = mapping_at(doc, section.path)
    assert key in mapping, "the example must hold every required key"
    del mapping[key]
    assert list(VALIDATOR.iter_errors(copy.deepcopy(doc))) != []
    error = loader_error(doc)
    assert error is not None
    assert repr(key) in error.bare_message or error.key.endswith(key), error


def test_a_spec_without_inputs_is_a_clear_spec_error():
    with pytest.raises(SpecError) as info:
        load_spec_text("outputs:\n  y: 2.0\n", path="spec.yaml")
    assert str(info.value).startswith("spec.yaml:1:1: inputs: a spec needs inputs")
    assert list(VALIDATOR.iter_errors({"outputs": {"y": 2.0}})) != []
