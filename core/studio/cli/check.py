"""``python -m core check``: is the configured model ready for the methods? One small structured call, as they make."""

from __future__ import annotations

from core.engine.llm import LLM, LLMError
from core.engine.llm.check import check
from core.engine.llm.ladder import MODE_NAMES


def register(commands) -> None:
    p = commands.add_parser("check", help="make one structured call to the configured model and say how it answered")
    p.set_defaults(handler=handle)


def handle(args) -> int:
    llm = LLM(cache_mode="off")
    profile = llm.profile
    print(
        f"{llm.where}: {profile.label} ({profile.name}), first asks for {MODE_NAMES[profile.dialect]}, "
        f"sends {profile.token_field}, takes {', '.join(sorted(profile.sampling)) or 'no sampling fields'}"
        + (", a reasoning model" if profile.reasoning else "")
    )
    try:
        checked = check(llm)
    except LLMError as exc:
        print(f"not ready: {exc}")
        return 1
    print(f"ready: {llm.model_name} answered a structured reply ({checked.mode}) in {checked.seconds:.1f} s")
    for note in checked.notes:
        print(f"  note: {note}")
    return 0
