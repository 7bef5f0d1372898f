"""The Settings part that says how the embedded server is set up and how fast it measured: slots, context per
slot, prompt cache, prefix sharing, the CPU instructions llama.cpp was compiled for, and the last
LLM benchmark's figures (naive vs shipped configuration)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from core.engine.llm import cpu_build, embedded
from core.engine.llm.speed import MeasuredSpeed, measured
from core.engine.llm.tokens import CHARS_PER_TOKEN
from core.engine.methods import registry


def config_rows(config: embedded.ServerConfig) -> dict[str, str]:
    cache = (
        "off"
        if not config.cache_prompt
        else (
            f"on: each slot's own prefix, plus {config.cache_ram_mib:,} MiB in host memory shared by all slots"
            if config.cache_ram_mib
            else "on: each slot's own prefix only"
        )
    )
    return {
        "Slots (calls served at once)": str(config.slots),
        "Context per slot": f"{config.slot_context:,} tokens",
        "Documents one call reads": f"at most {config.read_tokens:,} tokens (about "
        f"{config.read_tokens * CHARS_PER_TOKEN:,} characters), so a reading call stays "
        "under a minute on two cores",
        "Prompt cache": cache,
        "KV cache": "one pool for all slots" if config.kv_unified else "one per slot",
        "Calls made together": "their shared prompt prefix read once, then copied into the slots that answer them"
        if config.copies_prefixes
        else "each reads its whole prompt in its own slot",
    }


def bench_table(speed: MeasuredSpeed) -> list[dict[str, Any]]:
    """One row per method: naive and shipped seconds (mean per question), the ratio and its range over questions."""
    rows, labels = [], {name: spec.label for name, spec in registry().items()}
    for method, row in speed.methods.items():
        naive, shipped, ratio, equal = row.naive, row.shipped, row.ratio, row.ratio_equal_work
        if not naive or not shipped:
            continue
        rows.append(
            {
                "method": labels.get(method, method),
                "questions": len(ratio),
                "naive s": round(naive.seconds, 1),
                "shipped s": round(shipped.seconds, 1),
                "shipped / naive": round(sum(ratio) / len(ratio), 2) if ratio else None,
                "at equal work": round(sum(equal) / len(equal), 2) if equal else None,
                "range over questions": f"{min(ratio):.2f}–{max(ratio):.2f}" if ratio else "",
                "prompt tokens read, naive": round(naive.prompt_evaluated),
                "prompt tokens read, shipped": round(shipped.prompt_evaluated),
                "generated tok/s, shipped": round(shipped.generated_per_s, 1) if shipped.generated_per_s else None,
            }
        )
    return rows


def server_section() -> None:
    """The running server's configuration (the shipped one before it starts)."""
    running = embedded.EmbeddedServer.current()
    config = running.config if running else embedded.SHIPPED
    st.markdown("**Server configuration**" + ("" if running else " (applied when the model starts)"))
    # Lines rather than a table: the values are sentences, which a table column cuts off in a half-width column.
    rows = config_rows(config)
    if build := cpu_build.current():
        rows["llama.cpp compiled for"] = build.describe()
    st.markdown("\n".join(f"- **{k}**: {v}" for k, v in rows.items()))


def benchmark_section() -> None:
    """The last LLM benchmark's figures, naive against shipped per method (wide: under both columns)."""
    speed = measured()
    table = bench_table(speed) if speed else []
    if not table:
        st.caption("No LLM benchmark figures yet: `python -m benchmarks.llm_bench` measures them.")
        return
    st.markdown("**Last LLM benchmark** (naive: one slot, no prompt cache, calls in sequence)")
    st.dataframe(table, hide_index=True, width="stretch")
    st.caption(
        f"Embedded model on two CPU cores, response cache off, measured up to {speed.measured_to}. Each method ran "
        "the same questions in both configurations (how many: its row); with so few a ratio whose range crosses "
        "1.0 cannot tell the two apart. Sampled agents can take a longer or shorter path in either "
        "configuration; *at equal work* compares the shipped seconds with the naive run's reading and "
        "writing rates applied to the shipped run's tokens (an estimate). Reproduce with "
        "`python -m benchmarks.llm_bench`."
    )
