"""``python -m core prices [list|set|remove]``: what you pay per million tokens of each model, so runs show their cost."""

from __future__ import annotations

import sys

from pydantic import ValidationError

from core.engine.store import RunStore
from core.engine.store.prices import model_runs
from core.studio.pricing import CURRENCIES, EMBEDDED_MODEL, Price, prices, rate, remove_price, save_price


def register(commands) -> None:
    p = commands.add_parser(
        "prices",
        help="list, set or remove the price per million tokens of a model (entered by "
        "you; runs then show what they cost)",
    )
    p.set_defaults(handler=handle_list)
    actions = p.add_subparsers(dest="action", metavar="ACTION")
    actions.add_parser("list", help="the prices set, with how many runs each model has (also `prices` alone)")
    put = actions.add_parser("set", help="set a model's price per million input and output tokens")
    put.add_argument("model", help="the model name, as runs record it (History shows it; `prices` lists them)")
    put.add_argument("--input", type=float, required=True, metavar="PRICE", help="per million input tokens")
    put.add_argument("--output", type=float, required=True, metavar="PRICE", help="per million output tokens")
    put.add_argument(
        "--currency",
        default="USD",
        type=str.upper,
        help=f"a three-letter code (default USD; e.g. {', '.join(CURRENCIES[1:4])})",
    )
    put.set_defaults(handler=handle_set)
    drop = actions.add_parser("remove", help="remove a model's price (its runs then show no cost)")
    drop.add_argument("model")
    drop.set_defaults(handler=handle_remove)


def handle_list(args) -> int:
    store = RunStore()
    table, used = prices(store), model_runs(store)
    for price in table.values():
        print(
            f"{price.model}: {rate(price.input_per_m, price.currency)} per M input, "
            f"{rate(price.output_per_m, price.currency)} per M output ({used.get(price.model, 0)} runs)"
        )
    missing = [m for m in used if m not in table and m != EMBEDDED_MODEL]
    if not table:
        print("no price is set")
    if missing:
        print("used without a price: " + ", ".join(f"{m} ({used[m]} runs)" for m in missing))
    return 0


def handle_set(args) -> int:
    try:
        price = Price(model=args.model, input_per_m=args.input, output_per_m=args.output, currency=args.currency)
        save_price(RunStore(), price)
    except ValidationError as exc:
        return _error("; ".join(f"{_option(e['loc'][0])}: {e['msg']}" for e in exc.errors()))
    except ValueError as exc:
        return _error(str(exc))
    print(f"{price.model}: {price.rates}")
    return 0


def handle_remove(args) -> int:
    if not remove_price(RunStore(), args.model):
        return _error(f"{args.model} has no price")
    print(f"removed the price of {args.model}")
    return 0


def _option(field: object) -> str:
    return {"input_per_m": "--input", "output_per_m": "--output", "currency": "--currency"}.get(str(field), "MODEL")


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2
