"""How many tokens a second the embedded server writes for one call alone and for three calls at once, and how fast it
reads a prompt, under llama.cpp settings that might change either on a few CPU cores. Prints one line per setting.

    .venv/bin/python -m benchmarks.slot_decode_bench

Calls made together (MASS-RAG's three views, Discuss-RAG's experts) save time only as far as slots writing at once
write more tokens a second than one slot; this measures that factor. Each setting starts its own server, so the
settings are compared in one sitting; run it on an idle machine, the figures only mean something there.
"""

from __future__ import annotations

import argparse
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from tqdm import tqdm

from core.engine.llm import embedded

GGML_TYPE_F16, GGML_TYPE_Q8_0 = 1, 8


@dataclass(frozen=True)
class Setting(embedded.ServerConfig):
    """The shipped server with llama.cpp's thread polling, flash attention and KV-cache type as knobs."""

    poll: int = 50  # llama.cpp's default: threads spin this long waiting for work before they sleep
    flash_attn: int = -1  # -1 automatic (llama.cpp's default), 0 off, 1 on
    kv_type: int = GGML_TYPE_F16

    def apply(self, params, model, threads, slot_dir=None) -> None:
        super().apply(params, model, threads, slot_dir)
        params.cpuparams.poll = params.cpuparams_batch.poll = self.poll
        params.flash_attn_type = self.flash_attn
        params.cache_type_k = params.cache_type_v = self.kv_type


SETTINGS = {
    "shipped": Setting(name="shipped"),
    "no polling": Setting(name="no polling", poll=0),
    "flash attention off": Setting(name="flash attention off", flash_attn=0),
    "flash attention on": Setting(name="flash attention on", flash_attn=1),
    "KV cache q8_0": Setting(name="KV cache q8_0", flash_attn=1, kv_type=GGML_TYPE_Q8_0),
}
PROMPT = "Write a long essay, number {i}, on the physiology of the kidney, the heart and the liver, in detail."
READING = "The kidney filters the blood and keeps the balance of water and electrolytes. " * 120


def post(server: embedded.EmbeddedServer, body: dict) -> dict:
    return server._json("/v1/chat/completions", {"model": embedded.MODEL_NAME, **body}, timeout=1800)


def write(server: embedded.EmbeddedServer, i: int, tokens: int) -> None:
    post(
        server,
        {
            "messages": [{"role": "user", "content": PROMPT.format(i=i)}],
            "max_tokens": tokens,
            "temperature": 0,
            "ignore_eos": True,
        },
    )


def measure(setting: Setting, tokens: int) -> dict[str, float]:
    server = embedded.EmbeddedServer(embedded.assemble(), config=setting)
    try:
        return rates(server, tokens)
    finally:
        server.stop()  # the next setting's server gets the cores and the memory


def rates(server: embedded.EmbeddedServer, tokens: int) -> dict[str, float]:
    write(server, 0, 8)  # warm-up
    started = time.perf_counter()
    write(server, 1, tokens)
    alone = tokens / (time.perf_counter() - started)
    started = time.perf_counter()
    with ThreadPoolExecutor(3) as pool:
        list(pool.map(lambda i: write(server, i, tokens), (2, 3, 4)))
    together = 3 * tokens / (time.perf_counter() - started)
    started = time.perf_counter()
    read = post(
        server,
        {"messages": [{"role": "user", "content": READING}], "max_tokens": 1, "temperature": 0, "cache_prompt": False},
    )["usage"]["prompt_tokens"] / (time.perf_counter() - started)
    return {"alone": alone, "together": together, "read": read}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--settings", default=",".join(SETTINGS), help=f"comma-separated, of: {', '.join(SETTINGS)}")
    p.add_argument("--tokens", type=int, default=128, help="tokens each call writes")
    args = p.parse_args(argv)
    names = [n.strip() for n in args.settings.split(",") if n.strip()]
    unknown = [n for n in names if n not in SETTINGS]
    if unknown:
        p.error(f"unknown setting(s): {', '.join(unknown)}")
    rows = [(name, measure(SETTINGS[name], args.tokens)) for name in tqdm(names, desc="settings")]
    print(f"{'setting':<22} {'1 call tok/s':>13} {'3 at once tok/s':>16} {'gain':>6} {'prompt read tok/s':>18}")
    for name, r in rows:
        print(
            f"{name:<22} {r['alone']:>13.1f} {r['together']:>16.1f} {r['together'] / r['alone']:>5.2f}x "
            f"{r['read']:>18.0f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
