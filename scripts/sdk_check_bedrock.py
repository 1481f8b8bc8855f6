#!/usr/bin/env python3
"""Validate Bedrock Converse request bodies against AWS's service model.

Usage: sdk_check_bedrock.py DIR

Every `*.json` file in DIR must be a body that the `bedrock-runtime` service
model shipped in botocore accepts as the input of `Converse` (the model id,
which goes in the URL, is added as `modelId`). Validated strictly:
  - botocore's own ParamValidator (required members, types, unknown members,
    unions with one member set, minimums);
  - and what it leaves out: enums, maximum lengths and values, string
    patterns;
  - blobs must be base64 (as the JSON protocol sends them), decoded to bytes
    before botocore sees them.
Prints one line per failure (file, error path, message) and ends with
`N passed, M failed`. Exits 1 if anything failed or DIR holds no body.
"""

from __future__ import annotations

import base64
import binascii
import re
import sys

import botocore.session
from botocore.validate import ParamValidator

import check_runner


def _walk(value, shape, path, errors):
    """`value` with blobs decoded, checking what ParamValidator does not."""
    kind = shape.type_name
    if kind == "structure" and isinstance(value, dict):
        out = {}
        for key, item in value.items():
            member = shape.members.get(key)
            out[key] = _walk(item, member, f"{path}.{key}", errors) if member else item
        return out
    if kind == "list" and isinstance(value, list):
        limit = shape.metadata.get("max")
        if limit is not None and len(value) > limit:
            errors.append(f"{path}: {len(value)} items, more than {limit}")
        return [_walk(item, shape.member, f"{path}[{i}]", errors) for i, item in enumerate(value)]
    if kind == "map" and isinstance(value, dict):
        return {k: _walk(v, shape.value, f"{path}.{k}", errors) for k, v in value.items()}
    if kind == "blob" and isinstance(value, str):
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError) as error:
            errors.append(f"{path}: not base64: {error}")
            return value
    if kind == "string" and isinstance(value, str):
        if shape.enum and value not in shape.enum:
            errors.append(f"{path}: {value!r} is not one of {shape.enum}")
        limit = shape.metadata.get("max")
        if limit is not None and len(value) > limit:
            errors.append(f"{path}: {len(value)} characters, more than {limit}")
        pattern = shape.metadata.get("pattern")
        if pattern and re.fullmatch(pattern, value) is None:
            errors.append(f"{path}: {value!r} does not match {pattern}")
    if kind in ("integer", "long", "float", "double") and isinstance(value, (int, float)):
        limit = shape.metadata.get("max")
        if limit is not None and value > limit:
            errors.append(f"{path}: {value} is more than {limit}")
    return value


def main(argv: list[str]) -> int:
    shape = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse").input_shape
    validator = ParamValidator()

    def check(body, _text):
        if "modelId" in body:
            return ["modelId: the model id goes in the URL, not the body"]
        errors: list[str] = []
        params = _walk(dict(body, modelId="us.anthropic.claude-sonnet-4-5-20250929-v1:0"), shape, "", errors)
        report = validator.validate(params, shape)
        if report.has_errors():
            errors.extend(report.generate_report().splitlines())
        return [error.strip() for error in errors]

    return check_runner.main(argv, __doc__, "request bodies", check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
