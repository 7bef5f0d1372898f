"""Where a call is sent: the embedded llama.cpp server this process starts, or a remote endpoint. Both answer the
same questions (address, model name, window, how calls made together share a prompt), so the client asks the one it
holds and never branches on which it is."""

from __future__ import annotations

from core.engine.llm.endpoint import Endpoint, split_credentials
from core.engine.llm.fan_out import FanOut


class Remote:
    """An OpenAI-compatible endpoint somewhere else."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint

    def address(self) -> tuple[str, tuple[str, str] | None]:
        """The base URL without credentials, and the (user, password) it held."""
        return split_credentials(self.endpoint.base_url or "")

    @property
    def model_name(self) -> str:
        return self.endpoint.model

    @property
    def backend(self) -> str:
        return f"{self.model_name} @ {self.endpoint.display_url}"

    @property
    def where(self) -> str:
        return f"the LLM endpoint at {self.endpoint.display_url}"

    @property
    def context_window(self) -> int | None:
        """Settings' value, else the family's when it has one size; None when not known."""
        return self.endpoint.context_window or self.endpoint.profile.context_window

    reading_tokens: int | None = None  # an endpoint reads what its window holds

    def fan_out(self, size: int) -> FanOut | None:
        return None  # an endpoint shares prompt prefixes (or not) its own way


class Embedded:
    """The embedded model, served in-process; started by the first call that needs it."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint

    def address(self) -> tuple[str, tuple[str, str] | None]:
        from core.engine.llm.embedded import EmbeddedServer

        return EmbeddedServer.get().base_url, None

    @property
    def model_name(self) -> str:
        from core.engine.llm.embedded import MODEL_NAME

        return self.endpoint.model or MODEL_NAME

    @property
    def backend(self) -> str:
        return self.model_name  # the same file served by another build gives other replies: kept apart by name

    where = "the embedded model"

    @property
    def context_window(self) -> int | None:
        """The server's slot as it reports it (starting the server if need be)."""
        from core.engine.llm.embedded import EmbeddedServer

        return self.endpoint.context_window or EmbeddedServer.get().slot_context

    @property
    def reading_tokens(self) -> int | None:
        """What a few CPU cores read in well under a minute (``ServerConfig.read_tokens``)."""
        from core.engine.llm.embedded import SHIPPED

        return SHIPPED.read_tokens

    def fan_out(self, size: int) -> FanOut | None:
        """Calls made at once read their shared prefix once: the server copies it between its slots (started only
        if a call of the group goes to it)."""
        from core.engine.llm.embedded import SHIPPED, EmbeddedServer

        if size < 2 or not SHIPPED.copies_prefixes:
            return None
        return FanOut(size, lambda prefix, copies: EmbeddedServer.get().share_prefix(prefix, copies))


Server = Remote | Embedded


def server_for(endpoint: Endpoint) -> Server:
    return Remote(endpoint) if endpoint.base_url else Embedded(endpoint)
