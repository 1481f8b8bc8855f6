#!/usr/bin/env python3
"""Validate Gemini generateContent request bodies against the official SDK's types.

Usage: sdk_check_gemini.py DIR

Every `*.json` file in DIR must be a REST body of `models.generateContent` (camelCase,
the model in the URL). The google-genai SDK has no model of the REST request itself,
so this builds one from the SDK's own pydantic models, field for field as the REST
API names them: `contents: list[Content]`, `systemInstruction: Content`,
`tools: list[Tool]`, `toolConfig: ToolConfig`, `generationConfig: GenerationConfig`,
`safetySettings: list[SafetySetting]`, `cachedContent: str`. Validation is STRICT:
  - extra keys are forbidden at every level (the SDK's models already forbid them);
  - keys must be the camelCase aliases (`inlineData`, not `inline_data`), as on the wire
    (checked by reading the body back through the SDK: every key must survive);
  - strict mode: no coercion; bytes fields (`data`, `thoughtSignature`) must be base64.
Prints one line per failure (file, error path, message) and ends with
`N passed, M failed`. Exits 1 if anything failed or DIR holds no body.
"""

from __future__ import annotations

import sys
from typing import Optional

import pydantic
from pydantic.alias_generators import to_camel

from google.genai import types

import check_runner


class GenerateContentRequest(pydantic.BaseModel):
    """The REST body of `models/{model}:generateContent`, from the SDK's models."""

    model_config = pydantic.ConfigDict(
        alias_generator=to_camel,
        extra="forbid",
        strict=True,
        val_json_bytes="base64",
    )

    contents: list[types.Content]
    system_instruction: Optional[types.Content] = None
    tools: Optional[list[types.Tool]] = None
    tool_config: Optional[types.ToolConfig] = None
    generation_config: Optional[types.GenerationConfig] = None
    safety_settings: Optional[list[types.SafetySetting]] = None
    cached_content: Optional[str] = None


def key_mismatch(sent, read, path: str = "") -> Optional[str]:
    """The first place where the keys of the body differ from the keys the SDK
    reads back (`inline_data` is accepted by name but read as `inlineData`)."""
    if isinstance(sent, dict) and isinstance(read, dict):
        for key in sent:
            if key not in read:
                return f"{path}{key}: not a wire name of the SDK type"
            found = key_mismatch(sent[key], read[key], f"{path}{key}.")
            if found:
                return found
    elif isinstance(sent, list) and isinstance(read, list):
        for i, (a, b) in enumerate(zip(sent, read)):
            found = key_mismatch(a, b, f"{path}{i}.")
            if found:
                return found
    return None


def check(body, text):
    try:
        request = GenerateContentRequest.model_validate_json(
            text, strict=True, by_alias=True, by_name=False
        )
    except pydantic.ValidationError as error:
        errors = error.errors()
        best = max(errors, key=lambda e: len(e["loc"]))
        loc = ".".join(str(p) for p in best["loc"])
        more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
        return [f"{loc}: {best['msg']}{more}"]
    read = request.model_dump(mode="json", by_alias=True, exclude_unset=True)
    mismatch = key_mismatch(body, read)
    return [mismatch] if mismatch else []


if __name__ == "__main__":
    sys.exit(check_runner.main(sys.argv, __doc__, "request bodies", check))
