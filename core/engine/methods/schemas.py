"""Reply schemas' building blocks: a text bounded in the server's grammar, a list asked for by count, a reply in one
of several shapes."""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import BaseModel, Field, RootModel

from core.engine.llm.schemas import Count


def bounded(chars: int | None, description: str | None = None) -> Any:
    """A text field of at most ``chars`` characters (None: any length). The bound reaches the server's grammar only,
    so a longer text from a backend that does not hold to it still parses."""
    return Field(description=description, json_schema_extra={"maxLength": chars} if chars else None)


def counted(
    item: Any, n: int, noun: str, *, least: int = 1, description: str | None = None, items: dict | None = None
) -> tuple[Any, Any]:
    """A list field (type and field, for ``create_model``) of ``n`` items of ``item``, ``noun`` in words. The server
    is asked for exactly ``n`` (a grammar holds to it); a backend that writes fewer still gives a usable reply down to
    ``least`` items, and the trace says how many it wrote (``core.engine.llm.schemas.shortfalls``). ``items``: the
    schema of each item where it is bounded in the grammar."""
    extra = {"items": items} if items else {}
    return (
        Annotated[list[item], Count(n, noun)],
        Field(min_length=least, max_length=n, description=description, json_schema_extra={**extra, "minItems": n}),
    )


def one_of(name: str, *shapes: type[BaseModel]) -> type[BaseModel]:
    """A reply the model writes in one of several shapes, e.g. a decline that ends at the decision and an acceptance
    that goes on to say more: the grammar holds the model to one of them, and the parsed reply is that shape."""
    return type(name, (RootModel[Union[shapes]],), {"__module__": __name__})  # noqa: UP007 - shapes known at run time
