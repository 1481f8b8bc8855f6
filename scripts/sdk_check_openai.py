#!/usr/bin/env python3
"""Validate OpenAI request bodies against the official SDK types.

Usage: sdk_check_openai.py chat|responses DIR

Every ``*.json`` file in DIR must be a request body accepted by
``openai.types.chat.CompletionCreateParamsNonStreaming`` (chat) or
``openai.types.responses.ResponseCreateParamsNonStreaming`` (responses), or
their ``...Streaming`` forms when the body sets ``"stream": true``, validated by pydantic STRICTLY: every
TypedDict of ``openai.types`` is closed (extra keys forbidden) and no value is
coerced. Prints one line per failure (file, error path, message) and ends with
``N passed, M failed``; exits 1 if any failed or if DIR holds no body.
"""

import importlib
import pkgutil
import sys
from pathlib import Path

import pydantic
from typing_extensions import is_typeddict

import openai.types

import check_runner

STRICT = pydantic.ConfigDict(extra="forbid", strict=True)


def close_every_typeddict() -> int:
    """Set a forbid-extra, strict pydantic config on every SDK TypedDict."""
    closed = 0
    for info in pkgutil.walk_packages(openai.types.__path__, "openai.types."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and is_typeddict(value) and value.__module__.startswith("openai."):
                value.__pydantic_config__ = STRICT
                closed += 1
    return closed


def force(value, loc=()):
    """Validate what pydantic left lazy: fields typed ``Iterable[...]`` are
    checked only when iterated, so walk the result and exhaust them."""
    if isinstance(value, dict):
        for key, item in value.items():
            force(item, loc + (key,))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            force(item, loc + (index,))
    elif hasattr(value, "__next__"):
        index = 0
        while True:
            try:
                item = next(value)
            except StopIteration:
                return
            except pydantic.ValidationError as e:
                raise LazyError(loc + (index,), e) from None
            force(item, loc + (index,))
            index += 1


class LazyError(Exception):
    """A validation error found while exhausting a lazy iterable."""

    def __init__(self, loc, error):
        super().__init__(str(error))
        self.loc = loc
        self.error = error


def is_tag(part) -> bool:
    return isinstance(part, str) and ("[" in part or part in ("str", "list", "dict"))


def is_member(part) -> bool:
    return isinstance(part, str) and part[:1].isupper() and "[" not in part


def closest_errors(errors):
    """Of the errors of a union, those of the member that came closest: the one
    whose `type`/`role` literals matched, then the one with the fewest errors.
    A branch through no named member (such as `input` as a plain string) is
    used only when there is nothing else."""
    groups = {}
    for item in errors:
        loc = tuple(item["loc"])
        key = next((loc[: i + 1] for i, part in enumerate(loc) if is_member(part)), None)
        groups.setdefault(key, []).append(item)
    named = [group for key, group in groups.items() if key is not None]

    def rank(group):
        wrong_kind = sum(
            1 for item in group if item["type"] == "literal_error" and item["loc"][-1] in ("type", "role")
        )
        return (wrong_kind, len(group))

    return min(named or list(groups.values()), key=rank)


def error_lines(prefix, error: pydantic.ValidationError, limit: int = 6):
    errors = closest_errors(error.errors())
    seen = set()
    for item in errors:
        loc = ".".join(str(part) for part in prefix + tuple(item["loc"]) if not is_tag(part))
        line = f"{loc}: {item['msg']}"
        if line not in seen:
            seen.add(line)
            if len(seen) <= limit:
                yield line
    if len(seen) > limit:
        yield f"... {len(seen) - limit} more errors"


def main(argv) -> int:
    if len(argv) != 3 or argv[1] not in ("chat", "responses"):
        return check_runner.usage(__doc__)
    if close_every_typeddict() == 0:
        print("no TypedDict found in openai.types", file=sys.stderr)
        return 1
    if argv[1] == "chat":
        from openai.types.chat import completion_create_params as params

        adapters = {
            False: pydantic.TypeAdapter(params.CompletionCreateParamsNonStreaming),
            True: pydantic.TypeAdapter(params.CompletionCreateParamsStreaming),
        }
    else:
        from openai.types.responses import response_create_params as params

        adapters = {
            False: pydantic.TypeAdapter(params.ResponseCreateParamsNonStreaming),
            True: pydantic.TypeAdapter(params.ResponseCreateParamsStreaming),
        }

    def check(body, _text):
        streaming = isinstance(body, dict) and body.get("stream") is True
        try:
            force(adapters[streaming].validate_python(body, strict=True))
        except pydantic.ValidationError as e:
            return list(error_lines((), e))
        except LazyError as e:
            return list(error_lines(e.loc, e.error))
        return []

    return check_runner.check_files(Path(argv[2]), "request bodies", check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
