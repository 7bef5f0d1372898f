"""The Settings part on the embedded server: its configuration and the last LLM benchmark's figures."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.engine.llm import embedded
from core.engine.llm.speed import ConfigSpeed, MeasuredSpeed, MethodSpeed
from ui.settings import server_info

SPEED = MeasuredSpeed(
    model=embedded.MODEL_NAME,
    measured_to="2026-11-23 14:00:00",
    methods={
        "mass": MethodSpeed(
            median_seconds=55.0,
            naive=ConfigSpeed(seconds=100.0, prompt_evaluated=5000, generated_per_s=10.0),
            shipped=ConfigSpeed(seconds=55.0, prompt_evaluated=2000, generated_per_s=11.0),
            ratio=[0.5, 0.6],
            ratio_equal_work=[0.6, 0.7],
        ),
        "cot": MethodSpeed(
            median_seconds=None, naive=ConfigSpeed(seconds=10.0, prompt_evaluated=200, generated_per_s=10.0)
        ),
    },
)


def test_the_benchmark_table_has_the_ratio_and_its_range_per_method():
    rows = server_info.bench_table(SPEED)
    assert [r["method"] for r in rows] == ["MASS-RAG"]  # CoT has no shipped run yet
    assert rows[0]["shipped / naive"] == 0.55 and rows[0]["range over questions"] == "0.50–0.60"
    assert rows[0]["questions"] == 2 and rows[0]["at equal work"] == 0.65


def test_the_configuration_rows_say_what_the_server_does():
    rows = server_info.config_rows(embedded.SHIPPED)
    assert rows["Slots (calls served at once)"] == str(embedded.SHIPPED.slots)
    assert "host memory" in rows["Prompt cache"]
    assert server_info.config_rows(embedded.NAIVE)["Prompt cache"] == "off"
    assert "copied" in rows["Calls made together"]
    assert "own slot" in server_info.config_rows(embedded.NAIVE)["Calls made together"]


def test_settings_shows_the_server_and_the_committed_benchmark():
    at = AppTest.from_string(
        "from ui.settings.server_info import benchmark_section, server_section\nserver_section()\nbenchmark_section()",
        default_timeout=20,
    ).run()
    assert not at.exception
    assert "Server configuration" in at.markdown[0].value
    assert "llama.cpp compiled for" in at.markdown[1].value  # Linux: this CPU's flags against the serving build
    assert any("Last LLM benchmark" in m.value for m in at.markdown)
