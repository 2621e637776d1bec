"""The JSON Schema of report.json ("cloneprobe.audit/1"), derived from the report's types
(`cloneprobe.audit.audit_report`), so that the schema and the code cannot drift apart.

`python -m cloneprobe.audit.report_schema > docs/reference/report.schema.json` regenerates the
committed copy; tests/test_report_types.py fails when the two differ and validates real reports
against it (a key the code writes but the types lack fails too: typed objects allow no other
keys)."""

from __future__ import annotations

import collections.abc
import json
import sys
import types
import typing
from dataclasses import fields
from typing import Any, Union, get_args, get_origin, get_type_hints

from . import audit_report
from .audit_report import SCHEMA_VERSION, AuditReport
from .spool import RowSpool

_SCALARS = {str: "string", int: "integer", float: "number", bool: "boolean", type(None): "null"}


def _is_typed_dict(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, dict) and hasattr(kind, "__total__")


def type_schema(kind: Any, definitions: dict[str, dict]) -> dict:
    """The schema of one annotation; TypedDicts go into `definitions` by name."""
    if kind is Any or kind is audit_report.Json:
        return {}
    if kind in _SCALARS:
        return {"type": "number"} if kind is float else {"type": _SCALARS[kind]}
    if kind is RowSpool:
        return {"type": "array"}
    if _is_typed_dict(kind):
        name = kind.__name__.lstrip("_")
        if name not in definitions:
            definitions[name] = {}
            definitions[name] = _object_schema(kind, definitions)
        return {"$ref": f"#/$defs/{name}"}
    origin, args = get_origin(kind), get_args(kind)
    if origin in (Union, types.UnionType):
        options = [type_schema(a, definitions) for a in args if a is not RowSpool]
        if len(options) == 1:
            return options[0]
        if any(not o for o in options):
            return {}
        return {"anyOf": options}
    if origin in (list, tuple, typing.Sequence, collections.abc.Sequence):
        items = type_schema(args[0], definitions) if args else {}
        return {"type": "array", "items": items} if items else {"type": "array"}
    if origin in (dict, typing.Mapping, collections.abc.Mapping):
        return {"type": "object", "additionalProperties": type_schema(args[1], definitions)}
    raise TypeError(f"report_schema: no JSON Schema for the annotation {kind!r}")


def _object_schema(kind: type, definitions: dict[str, dict]) -> dict:
    hints = get_type_hints(kind, vars(audit_report))
    required = sorted(kind.__required_keys__)  # type: ignore[attr-defined]
    return {
        "type": "object",
        "properties": {k: type_schema(hints[k], definitions) for k in sorted(hints)},
        "required": required,
        "additionalProperties": False,
    }


def report_schema() -> dict:
    """The JSON Schema of report.json."""
    definitions: dict[str, dict] = {}
    hints = get_type_hints(AuditReport, vars(audit_report))
    properties, required = {}, []
    for f in fields(AuditReport):
        if f.name == "all_evidence":
            continue
        properties[f.name] = type_schema(hints[f.name], definitions)
        if f.default is not None:
            required.append(f.name)
    properties["schema"] = {"const": SCHEMA_VERSION}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_VERSION,
        "title": "cloneprobe audit report",
        "description": (audit_report.__doc__ or "").strip().split("\n\n")[0],
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
        "$defs": dict(sorted(definitions.items())),
    }


def schema_text() -> str:
    return json.dumps(report_schema(), indent=2) + "\n"


if __name__ == "__main__":
    sys.stdout.write(schema_text())
