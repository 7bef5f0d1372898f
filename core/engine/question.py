"""A question as a user asks it: free text, or multiple choice with lettered options."""

from __future__ import annotations

from pydantic import BaseModel, field_validator, model_validator

MAX_QUESTION_CHARS = 6000  # about 1.5k tokens: leaves room for evidence in an 8k-token context


def _utf8(value: str, what: str) -> str:
    """Bytes that are not UTF-8 reach Python as lone surrogates (from a terminal, a file read leniently): name them
    here, before they break a prompt, the store or a screen."""
    bad = next((i for i, ch in enumerate(value) if "\ud800" <= ch <= "\udfff"), None)
    if bad is not None:
        raise ValueError(
            f"{what} holds bytes that are not valid UTF-8 (at character {bad + 1}); "
            "retype it or save its source as UTF-8."
        )
    return value


class Question(BaseModel):
    text: str
    options: dict[str, str] = {}

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        value = _utf8(value.strip(), "The question")
        if not value:
            raise ValueError("The question is empty: type a question first.")
        if len(value) > MAX_QUESTION_CHARS:
            raise ValueError(
                f"The question is {len(value):,} characters long; the limit is {MAX_QUESTION_CHARS:,}. "
                "Shorten it to the clinically relevant part."
            )
        return value

    @field_validator("options")
    @classmethod
    def _options(cls, value: dict[str, str]) -> dict[str, str]:
        cleaned = {
            _utf8(str(k).strip(), "An option letter"): _utf8(str(v).strip(), f"Option {str(k).strip()}")
            for k, v in value.items()
        }
        if any(not k for k in cleaned):
            raise ValueError("Every option needs a letter.")
        if any(not v for v in cleaned.values()):
            raise ValueError("Every option needs a text; remove the empty ones.")
        return cleaned

    @model_validator(mode="after")
    def _choices(self) -> Question:
        if len(self.options) == 1:
            raise ValueError(
                "A multiple-choice question needs at least two options (or none, for a free-text question)."
            )
        return self

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)

    def render(self) -> str:
        """The question as agents read it."""
        if not self.options:
            return self.text
        lines = "\n".join(f"{k}. {v}" for k, v in self.options.items())
        return f"{self.text}\n\nOptions:\n{lines}"
