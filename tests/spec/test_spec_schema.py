"""The JSON Schema: valid draft 2020-12, described everywhere, in step with the loader."""
from __future__ import annotations

import json

import pytest
import yaml
from spec_samples import SPEC_V1_EXAMPLE

from gradcli.ops import DTYPES
from gradcli.spec import json_schema
from gradcli.spec.build import BACKENDS, TOP_KEYS, UNCONNECTED


def walk_properties(schema, path="$"):
    """Every (path, subschema) under a 'properties' key."""
    if isinstance(schema, dict):
        for name, sub in schema.get("properties", {}).items():
            yield f"{path}.{name}", sub
        for key, value in schema.items():
            yield from walk_properties(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from walk_properties(item, f"{path}[{i}]")


def test_schema_is_json_and_names_every_top_level_key():
    schema = json_schema()
    assert json.loads(json.dumps(schema)) == schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(schema["properties"]) == set(TOP_KEYS)
    assert schema["properties"]["backend"]["enum"] == list(BACKENDS)
    assert schema["properties"]["unconnected"]["enum"] == list(UNCONNECTED)
    inputs = schema["properties"]["inputs"]["additionalProperties"]["anyOf"][1]
    assert inputs["properties"]["dtype"]["enum"] == list(DTYPES)


def test_every_key_has_a_description():
    missing = [path for path, sub in walk_properties(json_schema()) if "description" not in sub]
    assert missing == []


def test_schema_accepts_the_example_and_flags_typos():
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(json_schema())
    jsonschema.Draft202012Validator.check_schema(json_schema())
    example = yaml.safe_load(SPEC_V1_EXAMPLE)
    assert list(validator.iter_errors(example)) == []
    example["inptus"] = {}
    example["backend"] = "pytorch"
    example["train"]["optimizer"]["name"] = "adamw"
    flagged = {tuple(e.absolute_path) for e in validator.iter_errors(example)}
    assert flagged == {(), ("backend",), ("train", "optimizer", "name")}
