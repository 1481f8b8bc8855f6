#!/usr/bin/env python3
"""Validate Anthropic Messages request bodies against the official SDK's types.

Usage: sdk_check_anthropic.py DIR

Every `*.json` file in DIR must be a body that `anthropic.types.MessageCreateParamsNonStreaming`
(the TypedDict the SDK's `messages.create` takes) accepts, validated STRICTLY with pydantic:
  - every TypedDict of `anthropic.types` forbids extra keys (`extra="forbid"`);
  - strict mode: no coercion (a "1" is not an int, an int is not a str);
  - the SDK's `Iterable[...]` fields are validated as lists (pydantic would
    otherwise validate an Iterable lazily, i.e. not at all).
Prints one line per failure (file, error path, message) and ends with
`N passed, M failed`. Exits 1 if anything failed or DIR holds no body.
"""

from __future__ import annotations

import collections.abc
import importlib
import pkgutil
import sys
import types
import typing

import pydantic
import typing_extensions

import anthropic.types

import check_runner


def _is_response_model(tp) -> bool:
    """A pydantic model (the SDK's response types), or a union of them."""
    if typing.get_origin(tp) in (typing_extensions.Annotated, typing.Annotated):
        tp = typing.get_args(tp)[0]
    if isinstance(tp, type):
        return issubclass(tp, pydantic.BaseModel)
    if typing.get_origin(tp) is typing.Union:
        return all(_is_response_model(a) for a in typing.get_args(tp))
    return False


def _strict(tp):
    """`tp` with Iterable[X] as List[X] and the SDK's response models (open
    pydantic models that also take dicts) removed from unions of request types."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is None or not args:
        return tp
    if origin in (collections.abc.Iterable, typing.Iterable):
        return typing.List[_strict(args[0])]
    if origin is typing.Union or (hasattr(types, "UnionType") and origin is types.UnionType):
        kept = [a for a in args if not _is_response_model(a)]
        kept = kept or list(args)
        return typing.Union[tuple(_strict(a) for a in kept)]
    if origin is typing_extensions.Annotated or origin is typing.Annotated:
        return typing_extensions.Annotated[(_strict(args[0]), *tp.__metadata__)]
    if origin in (list, typing.List):
        return typing.List[_strict(args[0])]
    if origin in (dict, typing.Dict):
        return typing.Dict[_strict(args[0]), _strict(args[1])]
    return tp


def _strict_sdk_types() -> None:
    """Close every TypedDict of anthropic.types, make Iterable fields lists and
    keep response models out of request unions."""
    config = pydantic.ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
    package = anthropic.types
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        modules.append(importlib.import_module(info.name))
    for module in modules:
        # Annotations are strings (`from __future__ import annotations`) that
        # pydantic evaluates in the module's namespace, so patching the names
        # there is enough; type aliases were built at import and are rebuilt.
        if getattr(module, "Iterable", None) is not None:
            module.Iterable = typing.List  # type: ignore[attr-defined]
        for name, value in list(vars(module).items()):
            if isinstance(value, type) and typing_extensions.is_typeddict(value):
                value.__pydantic_config__ = config  # type: ignore[attr-defined]
            elif typing.get_origin(value) is not None:
                setattr(module, name, _strict(value))


def main(argv: list[str]) -> int:
    _strict_sdk_types()
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    adapter = pydantic.TypeAdapter(MessageCreateParamsNonStreaming)

    def check(body, _text):
        try:
            adapter.validate_python(body, strict=True)
        except pydantic.ValidationError as error:
            # Each union branch reports its own errors: show the deepest one.
            errors = error.errors()
            best = max(errors, key=lambda e: len(e["loc"]))
            loc = ".".join(
                str(p) for p in best["loc"] if not str(p).startswith(("list[", "union[", "function-"))
            )
            more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
            return [f"{loc}: {best['msg']}{more}"]
        return []

    return check_runner.main(argv, __doc__, "request bodies", check)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
