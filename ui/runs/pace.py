"""How long a run will take and why it may go slower: the estimate before Run, the pace and time left while it goes,
a plain notice when other programs are using the computer, and where a run that takes minutes can be seen at once
(the recorded workshop pack). The figures are ``core.engine.estimate``'s and ``core.engine.cpu_load``'s."""

from __future__ import annotations

import streamlit as st

from core.engine.cpu_load import CPU
from core.engine.estimate import Estimate, estimate
from core.engine.live_run import LiveRun
from core.engine.llm import LLM
from core.engine.llm.speed import WRITING
from core.engine.methods.contract import MethodSpec
from core.studio.workshop.pack import load_pack, pack_dir
from ui.common import state
from ui.common.links import page_link
from ui.common.text import duration


def expected(method: str, llm: LLM) -> Estimate | None:
    return estimate(state.store(), method, llm.model_name, llm.backend)


def _speed(found: Estimate) -> str:
    """The writing speed the estimate went by, against the one it was measured at."""
    if found.rate_now is None:
        return "no call has run here yet to measure the model's speed now"
    then = f" against {found.measured_rate:.1f} when measured" if found.measured_rate else ""
    return f"the model writes {found.rate_now:.1f} tokens/s now{then}"


@st.cache_resource(show_spinner=False, max_entries=4)
def _pack_runs(folder: str, signature: tuple) -> dict[str, tuple[str, str]]:
    """Method -> (case id, case title) of its first recorded run in the pack."""
    found: dict[str, tuple[str, str]] = {}
    for pack_case in load_pack()[0]:
        for method in pack_case.runs:
            found.setdefault(method, (pack_case.case.id, pack_case.case.title))
    return found


def pack_run(method: str) -> tuple[str, str] | None:
    """The teaching case whose recorded run of ``method`` the workshop replays at once, if the pack has one."""
    folder = pack_dir()
    signature = tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.json.gz")))
    return _pack_runs(str(folder), signature).get(method)


def pack_pointer(spec: MethodSpec) -> None:
    """A link to the recorded pack's run of the method, replayed with no model."""
    found = pack_run(spec.name)
    if found is not None:
        case_id, title = found
        st.caption(
            f":material/fast_forward: A live {spec.label} run takes minutes here; the recorded teaching pack has "
            f"one on “{title}”, replayed at once with no model:"
        )
        page_link("workshop", f"Watch {spec.label} recorded, in the Workshop", case=case_id, method=spec.name)


def busy_notice() -> None:
    """Said only when other programs are using a good share of the processors."""
    load = CPU.now()
    if load is not None and load.busy:
        said = load.said()
        st.warning(
            f"{said[0].upper()}{said[1:]}: runs here go slower than estimated while it lasts.",
            icon=":material/speed:",
        )


def before_run(specs: list[MethodSpec], llm: LLM, *, point_to_pack: bool = True) -> None:
    """Under the Run button: how long each method is expected to take here, why, and (``point_to_pack``) where a
    run that takes minutes is recorded to be seen at once."""
    long = []
    for spec in specs:
        found = expected(spec.name, llm)
        if found is None:
            st.caption(
                f":material/schedule: {spec.label}: no estimate yet on this model; its first run here gives one."
            )
            continue
        st.caption(
            f":material/schedule: {spec.label}: expect about **{duration(found.seconds)}** on this computer "
            f"({duration(found.base)} {found.source}; {_speed(found)})."
        )
        if found.long and point_to_pack:
            long.append(spec)
    for spec in long:
        pack_pointer(spec)
    busy_notice()


def during_run(live: LiveRun) -> str:
    """The run's pace in a few words: tokens/s now, time left against its estimate."""
    parts = []
    if (now := WRITING.now(live.llm.backend)) is not None:
        parts.append(f"writing {now:.1f} tokens/s now")
    found = expected(live.spec.name, live.llm)
    if found is not None:
        left = found.left(live.elapsed)
        parts.append(
            f"about {duration(left)} left of the {duration(found.seconds)} expected"
            if left
            else f"past the {duration(found.seconds)} expected"
        )
    return " · ".join(parts)
