"""Reply schemas' building blocks: a text bounded in the server's grammar, a reply in one of several shapes."""

from __future__ import annotations

from typing import Any, Union

from pydantic import BaseModel, Field, RootModel


def bounded(chars: int | None, description: str | None = None) -> Any:
    """A text field of at most ``chars`` characters (None: any length). The bound reaches the server's grammar only,
    so a longer text from a backend that does not hold to it still parses."""
    return Field(description=description, json_schema_extra={"maxLength": chars} if chars else None)


def one_of(name: str, *shapes: type[BaseModel]) -> type[BaseModel]:
    """A reply the model writes in one of several shapes, e.g. a decline that ends at the decision and an acceptance
    that goes on to say more: the grammar holds the model to one of them, and the parsed reply is that shape."""
    return type(name, (RootModel[Union[shapes]],), {"__module__": __name__})  # noqa: UP007 - shapes known at run time
