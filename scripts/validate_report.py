#!/usr/bin/env python3
"""Validates nvfp4bench reports against schemas/report.schema.json.

Uses the jsonschema module when it is installed (Debian: python3-jsonschema). Without it (or
with --builtin) a small built-in validator checks the subset of JSON Schema the report schema
uses (type, const, enum, required, properties, additionalProperties, items, minItems, $ref,
if/then/else, minimum, maximum, exclusiveMinimum, multipleOf, pattern) and says so.
Usage: validate_report.py [--builtin] [--schema PATH] REPORT.json...   Exit 0 valid, 1 invalid, 2 usage."""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SCHEMA = os.path.join(HERE, "..", "schemas", "report.schema.json")

TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


def builtin_errors(value, schema, root, path="$"):
    """Yields 'path: problem' strings for the schema subset above."""
    if "$ref" in schema:
        node = root
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        yield from builtin_errors(value, node, root, path)
        return
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(TYPES[t](value) for t in types):
            yield f"{path}: {value!r} is not of type {'/'.join(types)}"
            return
    if "const" in schema and value != schema["const"]:
        yield f"{path}: {value!r} is not {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        yield f"{path}: {value!r} is not one of {schema['enum']}"
    if TYPES["number"](value):
        if "minimum" in schema and value < schema["minimum"]:
            yield f"{path}: {value} < minimum {schema['minimum']}"
        if "maximum" in schema and value > schema["maximum"]:
            yield f"{path}: {value} > maximum {schema['maximum']}"
        if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
            yield f"{path}: {value} <= exclusiveMinimum {schema['exclusiveMinimum']}"
        if "multipleOf" in schema and value % schema["multipleOf"] != 0:
            yield f"{path}: {value} is not a multiple of {schema['multipleOf']}"
    if isinstance(value, str) and "pattern" in schema and not re.search(schema["pattern"], value):
        yield f"{path}: {value!r} does not match {schema['pattern']}"
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            yield f"{path}: fewer than {schema['minItems']} items"
        if "items" in schema:
            for i, item in enumerate(value):
                yield from builtin_errors(item, schema["items"], root, f"{path}[{i}]")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                yield f"{path}: '{key}' is a required property"
        props = schema.get("properties", {})
        for key, item in value.items():
            if key in props:
                yield from builtin_errors(item, props[key], root, f"{path}.{key}")
            elif schema.get("additionalProperties", True) is False:
                yield f"{path}: additional property '{key}' is not allowed"
    if "if" in schema:
        branch = "then" if not list(builtin_errors(value, schema["if"], root, path)) else "else"
        if branch in schema:
            yield from builtin_errors(value, schema[branch], root, path)


def main(argv):
    builtin = "--builtin" in argv
    argv = [a for a in argv if a != "--builtin"]
    schema_path = DEFAULT_SCHEMA
    if "--schema" in argv:
        i = argv.index("--schema")
        schema_path = argv[i + 1]
        del argv[i:i + 2]
    if not argv:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    with open(schema_path) as f:
        schema = json.load(f)
    validator = None
    if not builtin:
        try:
            import jsonschema
            validator = jsonschema.Draft202012Validator(schema)
        except ImportError:
            print("validate_report: jsonschema is not installed: using the built-in subset validator")
    bad = 0
    for path in argv:
        try:
            with open(path) as f:
                report = json.load(f)
        except (OSError, ValueError) as e:
            print(f"{path}: cannot be read: {e}")
            return 2
        if validator is not None:
            errors = [f"{'$' + ''.join(f'[{p!r}]' for p in e.absolute_path)}: {e.message}"
                      for e in validator.iter_errors(report)]
        else:
            errors = list(builtin_errors(report, schema, schema))
        how = "jsonschema" if validator is not None else "built-in validator"
        if errors:
            bad += 1
            print(f"{path}: INVALID ({how}, {len(errors)} errors): " + "; ".join(errors[:5]))
        else:
            print(f"{path}: valid ({how})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
