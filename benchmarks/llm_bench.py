"""LLM benchmark: every method on a fixed set of questions, with the embedded server in its naive configuration
(no prompt cache, one slot, calls in sequence) and in the configuration the studio ships, in one process.

Per method and configuration it prints wall seconds, prompt tokens sent, prompt tokens the server actually
evaluated (llama.cpp's ``prompt_tokens_total`` counter; the rest came from its prompt cache), completion
tokens and generated tokens/s (llama.cpp's own generation timing), then the shipped/naive ratio of seconds.
The response cache is off and sampled calls get a fixed seed. Greedy calls then do the same work in both
configurations; sampled agents (Discuss-RAG, SEMA-RAG, MedRGAG) can still draw other replies, as the two compute
in different batches, and take a longer or shorter path. So the table also gives the ratio at equal work: the
shipped seconds against what the naive run would have taken for the shipped run's tokens, at the naive run's own
reading and writing rates (an estimate; for a method whose work is identical in both it is the plain ratio).

Runs are saved one by one to a results file and skipped when already there, so a long benchmark runs in
pieces (``--methods``/``--questions`` pick a piece; ``--report`` only prints the table). Each save also writes
what the studio reads of them, ``data/measured_speed.json`` (``core.engine.llm.speed``); ``--speed`` names another file. On a shared machine,
hold the heavy-job lock for each piece: ``.venv/bin/python -m benchmarks.llm_bench ...``.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from tqdm import tqdm

from core.engine.llm import LLM, Endpoint, embedded
from core.engine.llm.answer_formats import EMBEDDED_ANSWER_FORMAT, AnswerFormat
from core.engine.llm.speed import SPEED_FILE, ConfigSpeed, MeasuredSpeed, MethodSpeed
from core.engine.question import Question

RESULTS = Path(__file__).parent / "results" / "llm_bench.json"
SHARED_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "mirage"
SEED = 20240601
METHODS = ("cot", "medrag", "imedrag", "discuss", "sema", "medrgag", "mass")
TEACHING_CASES = ("stemi",)
# Two questions keep the whole benchmark (7 methods x 2 configurations) near 45 minutes on two cores.
MIRAGE_QUESTIONS = (("mmlu", "anatomy-000"),)
# Configurations tried besides the two the table compares (``--configs``); the shipped one is embedded.SHIPPED.
CONFIGS: dict[str, embedded.ServerConfig] = {
    "naive": embedded.NAIVE,
    "shipped": embedded.SHIPPED,
    "1 slot + RAM cache": replace(embedded.SHIPPED, name="1 slot + RAM cache", slots=1),
    "4 slots + RAM cache": replace(embedded.SHIPPED, name="4 slots + RAM cache", share_prefix=False),
}


@dataclass(frozen=True)
class BenchQuestion:
    key: str  # e.g. "teaching/stemi", "medqa/0018"
    question: Question


def questions(mirage: Path = SHARED_DATA, extra: tuple[tuple[str, str], ...] = ()) -> list[BenchQuestion]:
    """The fixed question set: teaching-pack cases, then MIRAGE dev questions (and any ``extra`` MIRAGE
    ``(dataset, id)``) when the shared data is there."""
    from core.studio.teaching import load_cases

    cases = {c.id: c for c in load_cases()}
    found = [BenchQuestion(f"teaching/{name}", cases[name].to_question()) for name in TEACHING_CASES]
    if (mirage / "benchmark.json.gz").is_file():
        from core.studio.eval.mirage import load_benchmark

        bench = load_benchmark(mirage / "benchmark.json.gz")
        for dataset, qid in dict.fromkeys(MIRAGE_QUESTIONS + extra):
            raw = bench.get(dataset, {}).get(qid)
            if raw is not None:
                found.append(BenchQuestion(f"{dataset}/{qid}", Question(text=raw["question"], options=raw["options"])))
    return found


class SeededLLM(LLM):
    """The studio's client with a fixed seed on every call, so sampled calls repeat across configurations; it
    reaches the embedded server by URL, so it says what that server reads per call, which answer format it
    answers in and how calls made together share their prompt prefix, as the embedded client does."""

    def __init__(
        self, endpoint: Endpoint, reading_tokens: int, server: embedded.EmbeddedServer | None = None, **kwargs
    ):
        super().__init__(endpoint, **kwargs)
        self._reading_tokens = reading_tokens
        self._server = server

    @property
    def reading_tokens(self) -> int | None:
        return self._reading_tokens

    @property
    def answer_format(self) -> AnswerFormat:
        return EMBEDDED_ANSWER_FORMAT

    def fan_out(self, size: int):
        return self._server.fan_out(size) if self._server is not None else None

    def complete(self, messages, **kwargs):
        kwargs.setdefault("seed", SEED)
        return super().complete(messages, **kwargs)


def delta(after: dict[str, float], before: dict[str, float], name: str) -> float:
    return after.get(name, 0.0) - before.get(name, 0.0)


def run_one(
    method: str, item: BenchQuestion, server: embedded.EmbeddedServer, llm: LLM, retriever, sequential: bool
) -> dict[str, Any]:
    from core.engine.runner import execute

    def in_sequence(ctx) -> None:
        if sequential:
            ctx.max_workers = 1  # the naive configuration makes every call after the previous one

    before = server.metrics()
    started = time.perf_counter()
    run = execute(method, item.question, llm=llm, retriever=retriever, ctx_hook=in_sequence)
    seconds = time.perf_counter() - started
    after = server.metrics()
    predicted_s = delta(after, before, "tokens_predicted_seconds_total")
    return {
        "method": method,
        "question": item.key,
        "status": run.status,
        "answer": run.answer.choice if run.answer else None,
        "error": next((e.payload.message for e in run.events if e.payload.kind == "error"), None),
        "seconds": round(seconds, 2),
        "calls": run.totals.calls,
        "prompt_sent": run.totals.prompt_tokens,
        "prompt_evaluated": int(delta(after, before, "prompt_tokens_total")),
        "completion": run.totals.completion_tokens,
        "generated": int(delta(after, before, "tokens_predicted_total")),
        "generated_per_s": round(delta(after, before, "tokens_predicted_total") / predicted_s, 2)
        if predicted_s
        else None,
        "at": time.strftime("%Y-%m-%d %H:%M:%S"),
    }


# -- results file ----------------------------------------------------------------------------


def load(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return {"runs": {}, "configs": {}}


def save(path: Path, data: dict[str, Any], speed_file: Path = SPEED_FILE) -> None:
    data["summary"] = latest(data, ["naive", "shipped"])
    _write(path, json.dumps(data, indent=1))
    _write(speed_file, speed(data).model_dump_json(indent=1))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text + "\n", encoding="utf-8")
    tmp.replace(path)


def key(config: str, method: str, question: str) -> str:
    return f"{config} | {method} | {question}"


# -- table -----------------------------------------------------------------------------------


def summarize(data: dict[str, Any], config: str, method: str) -> dict[str, Any] | None:
    runs = [r for k, r in data["runs"].items() if k.startswith(f"{config} | {method} | ")]
    if not runs:
        return None
    rates = [r["generated_per_s"] for r in runs if r["generated_per_s"]]
    return {
        "n": len(runs),
        "questions": sorted(r["question"] for r in runs),
        "seconds": sum(r["seconds"] for r in runs) / len(runs),
        "prompt_sent": sum(r["prompt_sent"] for r in runs) / len(runs),
        "prompt_evaluated": sum(r["prompt_evaluated"] for r in runs) / len(runs),
        "completion": sum(r["completion"] for r in runs) / len(runs),
        "generated_per_s": statistics.fmean(rates) if rates else math.nan,
        "failed": sum(r["status"] != "ok" for r in runs),
    }


def _paired(data: dict[str, Any], method: str, config: str, baseline: str) -> list[tuple[dict, dict]]:
    """(run, baseline run) per question both configurations ran."""
    found = []
    for k, r in data["runs"].items():
        if k.startswith(f"{config} | {method} | ") and (base := data["runs"].get(key(baseline, method, r["question"]))):
            found.append((r, base))
    return found


def ratios(data: dict[str, Any], method: str, config: str, baseline: str) -> list[float]:
    """shipped/naive seconds per question, on the questions both configurations ran."""
    return [r["seconds"] / base["seconds"] for r, base in _paired(data, method, config, baseline) if base["seconds"]]


def naive_seconds_for(run: dict[str, Any], base: dict[str, Any]) -> float | None:
    """What ``base`` (a naive run: nothing cached, so every prompt token sent was read) would have taken for
    ``run``'s tokens: its writing time from llama.cpp's generation rate, the rest of its seconds as reading (with the
    retrieval's fraction of a second), each scaled to ``run``'s prompt tokens sent and completion tokens."""
    if not base.get("generated_per_s") or not base.get("prompt_sent") or not base.get("completion"):
        return None
    writing = base["completion"] / base["generated_per_s"]
    reading = base["seconds"] - writing
    if reading <= 0:
        return None
    return reading * run["prompt_sent"] / base["prompt_sent"] + writing * run["completion"] / base["completion"]


def equal_work_ratios(data: dict[str, Any], method: str, config: str, baseline: str) -> list[float]:
    """Seconds against the baseline's rescaled to this run's work, per question both configurations ran."""
    pairs = [(r, naive_seconds_for(r, base)) for r, base in _paired(data, method, config, baseline)]
    return [r["seconds"] / expected for r, expected in pairs if expected]


def _mean_and_each(values: list[float]) -> str:
    return f"{statistics.fmean(values):.2f} ({', '.join(f'{x:.2f}' for x in values)})" if values else ""


def table(data: dict[str, Any], configs: list[str], baseline: str = "naive") -> str:
    head = (
        f"{'method':<9} {'configuration':<24} {'n':>2} {'seconds':>8} {'prompt sent':>11} {'evaluated':>9} "
        f"{'completion':>10} {'gen tok/s':>9} {'failed':>6} {'ratio (per question)':>32} "
        f"{'at equal work (per question)':>32}"
    )
    lines = [head, "-" * len(head)]
    for method in METHODS:
        for config in configs:
            s = summarize(data, config, method)
            if s is None:
                continue
            plain = _mean_and_each(ratios(data, method, config, baseline) if config != baseline else [])
            equal = _mean_and_each(equal_work_ratios(data, method, config, baseline) if config != baseline else [])
            lines.append(
                f"{method:<9} {config:<24} {s['n']:>2} {s['seconds']:>8.1f} {s['prompt_sent']:>11.0f} "
                f"{s['prompt_evaluated']:>9.0f} {s['completion']:>10.0f} {s['generated_per_s']:>9.1f} "
                f"{s['failed']:>6} {plain:>32} {equal:>32}"
            )
    lines.append(
        "seconds and tokens: mean per question; ratio: this configuration's seconds / naive seconds, "
        "mean (each question); at equal work: against the naive seconds scaled to this configuration's "
        "prompt tokens sent and completion tokens at the naive run's own reading and writing rates."
    )
    return "\n".join(lines)


def markdown(data: dict[str, Any]) -> str:
    """The results file as docs/results/llm_bench.md shows it: per method and configuration, the mean per question."""
    lines = [
        "| method | configuration | questions | seconds | prompt sent | evaluated | completion | gen tok/s | "
        "failed | ratio to naive (each question) | at equal work |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for method in METHODS:
        for config in data["configs"]:
            if (s := summarize(data, config, method)) is None:
                continue
            plain = _mean_and_each(ratios(data, method, config, "naive")) if config != "naive" else ""
            equal = _mean_and_each(equal_work_ratios(data, method, config, "naive")) if config != "naive" else ""
            lines.append(
                f"| {method} | {config} | {s['n']} | {s['seconds']:.1f} | {s['prompt_sent']:,.0f} | "
                f"{s['prompt_evaluated']:,.0f} | {s['completion']:,.0f} | {s['generated_per_s']:.1f} | "
                f"{s['failed']} | {plain} | {equal} |"
            )
    return "\n".join(lines) + (
        "\n\nSeconds and tokens are means per question. Ratio: this configuration's seconds over "
        "the naive run's on the same question. At equal work: over what the naive run would "
        "have taken for this configuration's tokens, at its own reading and writing rates (an "
        "estimate)."
    )


def latest(data: dict[str, Any], configs: list[str]) -> dict[str, Any]:
    """What the Settings page shows: per method and configuration the summary, and the shipped/naive ratios."""
    out: dict[str, Any] = {"configs": {c: data["configs"].get(c) for c in configs}, "methods": {}}
    for method in METHODS:
        row = {c: summarize(data, c, method) for c in configs}
        if any(row.values()):
            out["methods"][method] = {
                **{c: v for c, v in row.items() if v},
                "ratio": ratios(data, method, "shipped", "naive"),
                "ratio_equal_work": equal_work_ratios(data, method, "shipped", "naive"),
            }
    return out


def speed(data: dict[str, Any]) -> MeasuredSpeed:
    """What the studio reads of the results: per method, the shipped server's median seconds per question (the runs
    that ended well) and the naive/shipped summary with its ratios."""
    summary = latest(data, ["naive", "shipped"])["methods"]
    seconds: dict[str, list[float]] = {}
    for run_key, run in data["runs"].items():
        config, method, _ = (part.strip() for part in run_key.split("|", 2))
        if config == "shipped" and run.get("status") == "ok":
            seconds.setdefault(method, []).append(float(run["seconds"]))

    def figures(row: dict[str, Any] | None) -> ConfigSpeed | None:
        if not row:
            return None
        rate = row["generated_per_s"]
        return ConfigSpeed(
            seconds=row["seconds"],
            prompt_evaluated=row["prompt_evaluated"],
            generated_per_s=None if math.isnan(rate) else rate,
        )

    methods = {
        method: MethodSpeed(
            median_seconds=statistics.median(seconds[method]) if method in seconds else None,
            naive=figures(summary.get(method, {}).get("naive")),
            shipped=figures(summary.get(method, {}).get("shipped")),
            ratio=summary.get(method, {}).get("ratio", []),
            ratio_equal_work=summary.get(method, {}).get("ratio_equal_work", []),
        )
        for method in METHODS
        if method in seconds or method in summary
    }
    measured_to = max((r["at"] for r in data["runs"].values()), default="")
    return MeasuredSpeed(model=embedded.MODEL_NAME, measured_to=measured_to, methods=methods)


# -- command line ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.llm_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--methods", default=",".join(METHODS), help="comma-separated (default: all)")
    p.add_argument(
        "--questions", default="", help="comma-separated keys, e.g. teaching/stemi,medqa/0018 (default: all)"
    )
    p.add_argument("--configs", default="naive,shipped", help=f"comma-separated, of: {', '.join(CONFIGS)}")
    p.add_argument("--out", type=Path, default=RESULTS, help="results file (runs already in it are skipped)")
    p.add_argument("--rerun", action="store_true", help="run again what the results file already holds")
    p.add_argument("--report", action="store_true", help="only print the table of what the results file holds")
    p.add_argument("--speed", type=Path, default=SPEED_FILE, help="the studio's speed file, written at each save")
    args = p.parse_args(argv)
    configs = [c.strip() for c in args.configs.split(",") if c.strip()]
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [c for c in configs if c not in CONFIGS] + [m for m in methods if m not in METHODS]
    if unknown:
        p.error(f"unknown configuration or method: {', '.join(unknown)}")
    data = load(args.out)
    if not args.report:
        wanted = [k.strip() for k in args.questions.split(",") if k.strip()]
        asked = tuple(tuple(k.split("/", 1)) for k in wanted if "/" in k and not k.startswith("teaching/"))
        items = questions(extra=asked)
        if wanted:
            items = [q for q in items if q.key in wanted]
            missing = sorted(set(wanted) - {q.key for q in items})
            if missing:
                p.error(
                    f"no such question: {', '.join(missing)} (MIRAGE keys are dataset/id and need "
                    "../shared/data; teaching cases: " + ", ".join(f"teaching/{c}" for c in TEACHING_CASES) + ")"
                )
        bench(data, args.out, configs, methods, items, args.rerun, args.speed)
    print(table(data, configs))
    return 0


def bench(
    data: dict[str, Any],
    out: Path,
    configs: list[str],
    methods: list[str],
    items: list[BenchQuestion],
    rerun: bool,
    speed_file: Path = SPEED_FILE,
) -> None:
    from core.engine.retrieval import open_retriever

    retriever = open_retriever(None, progress=True)
    for name in configs:
        todo = [(m, q) for m in methods for q in items if rerun or key(name, m, q.key) not in data["runs"]]
        if not todo:
            continue
        config = CONFIGS[name]
        server = embedded.EmbeddedServer.start(config)
        llm = SeededLLM(
            Endpoint(
                base_url=server.base_url, model=embedded.MODEL_NAME, timeout=1800, context_window=server.slot_context
            ),
            config.read_tokens,
            server,
            cache_mode="off",
        )
        data["configs"][name] = config.describe()
        try:
            for method, item in tqdm(todo, desc=name, unit="run", file=sys.stderr):
                result = run_one(method, item, server, llm, retriever, sequential=name == "naive")
                data["runs"][key(name, method, item.key)] = {**result, "config": name}
                save(out, data, speed_file)
                tqdm.write(
                    f"{name}: {method} on {item.key}: {result['seconds']:.0f}s, {result['status']}, "
                    f"prompt {result['prompt_sent']} sent / {result['prompt_evaluated']} evaluated",
                    file=sys.stderr,
                )
        finally:
            server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
