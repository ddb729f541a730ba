"""The int8 copy of a float32 network that plays in its place: the copy shipped beside a shipped
net, else the one in the user's cache (networks/cache.py), else one quantized now
(networks/quantize.py) into that cache. A transformer net that plays int8 by default does not
make its first start wait for the calibration: that start plays float32 while a helper process,
`python -m dosaku.networks.int8_copy MODEL PRODUCTS`, makes the copy for the starts after it.
Any failure on the way leaves float32 playing, said in one line on stderr."""

from __future__ import annotations

import contextlib
import fcntl
import mmap
import os
import subprocess
import sys
import traceback
from pathlib import Path

from dosaku.engine.evaluators.onnx_options import (
    INT8_RECIPES,
    cpu_plays_transformers_in_int8,
    int8_products_for_cpu,
)
from dosaku.networks.cache import Model, cache_dir, lookup, note, sha256_of, store

TRANSFORMER_MARK = b"attention_out:"  # the node name prefix of a katago_convert.ROLES role


def model_label(model: Model) -> str:
    return "the converted network (in memory)" if isinstance(model, bytes) else str(model)


def names_transformer_products(model: Model) -> bool:
    """Whether the model holds a transformer's matrix products as networks/katago_convert.py
    names them (what int8_transformer.suits reads from the parsed graph), found in the file's
    bytes: parsing the graph would cost importing onnx, half a second of a warm start."""
    if isinstance(model, bytes):
        return TRANSFORMER_MARK in model
    with open(model, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data.find(TRANSFORMER_MARK) >= 0


def copy_key(model: Model, recipe_name: str) -> str:
    """The cache name of the model's int8 copy by a recipe (networks/cache.store adds a hash)."""
    stem = model.stem if isinstance(model, Path) else "converted"
    return f"{stem}-{sha256_of(model)[:16]}-{recipe_name}"


def transformer_default(model: Model, products: str) -> Path | None:
    """What a transformer net plays without --int8 or --no-int8: float32 where its copy has not
    won at equal time; elsewhere the cached copy of `products`, or float32 for this start while
    a helper makes that copy in the background (its calibration would cost a first start
    half a minute)."""
    if not cpu_plays_transformers_in_int8():
        note("playing float32: transformer nets are not quantized by default on this CPU "
             "(--int8 to do so)")
        return None
    if isinstance(model, bytes):
        note("playing float32: the network converted in memory has no int8 copy to cache")
        return None
    key = copy_key(model, INT8_RECIPES[products])
    try:
        found = lookup(key)
    except OSError as err:  # a damaged copy (now removed) or an unreadable cache
        note(f"int8 copy unusable ({err})")
        found = None
    if found is not None:
        return found
    failed = failure_file(key)
    if failed.exists():
        note(f"playing float32: the int8 copy failed in an earlier start ({last_line(failed)}; "
             f"delete {failed} to try again)")
        return None
    try:
        subprocess.Popen([sys.executable, "-m", __name__, str(model), products],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError as err:
        note(f"int8 copy not started ({err}): playing float32")
        return None
    note(f"playing float32 while the int8 copy of {products} products is made in the "
         f"background into {cache_dir()} for later starts (--no-int8 to keep float32)")
    return None


def int8_for(model: Model, asked: bool = True, products: str | None = None) -> Path | None:
    """The int8 copy of a float32 ONNX model, or None after saying on stderr why float32 plays:
    the copy shipped beside a shipped net, else the cached one, else, for a net a recipe
    suits, quantized now (calibration self-play, up to a minute) into the cache; a
    transformer's by the recipe of `products` (int8_transformer.RECIPES; None: this CPU's,
    onnx_options.int8_products_for_cpu). Unless the user `asked` for int8, a transformer net
    plays what transformer_default says."""
    from dosaku.weights import shipped_int8_for
    products = products or int8_products_for_cpu()
    if isinstance(model, Path):
        shipped = shipped_int8_for(model)
        if shipped is not None:
            return shipped
    if not asked and names_transformer_products(model):
        return transformer_default(model, products)
    try:
        from dosaku.networks.quantize import load_graph, quantize, recipe, unsupported
    except ImportError as err:
        note(f"int8 unavailable ({err}): playing float32")
        return None
    graph = load_graph(model)
    key = copy_key(model, recipe(graph, products))
    try:
        found = lookup(key)
    except OSError as err:  # a damaged copy, or a cache that cannot be read
        note(f"int8 copy unusable ({err}): playing float32")
        return None
    if found is not None:
        return found
    reason = unsupported(graph)
    if reason is not None:
        note(f"int8: {reason}: playing float32")
        return None

    def write(out: Path) -> None:  # said once the cache is known to take it
        note(f"quantizing {model_label(model)} to int8 (calibration self-play, up to a minute; "
             f"cached in {cache_dir()})")
        quantize(model, out, products=products)

    try:
        return store(key, write)
    except Exception as err:  # an optional speed-up: any failure leaves float32 playing
        note(f"int8 copy not made ({type(err).__name__}: {err}): playing float32")
        return None


def failure_file(key: str) -> Path:
    """Where a helper that could not make the copy of `key` leaves what it said (main)."""
    return cache_dir() / f"{key}.failed"


def last_line(path: Path) -> str:
    lines = [line.strip() for line in path.read_text(errors="replace").splitlines()]
    return next((line for line in reversed(lines) if line), "no reason given")


def main(argv: list[str] | None = None) -> int:
    """The background helper: make MODEL's int8 copy of PRODUCTS in the cache, at the lowest
    priority, unless another helper is making it (each holds a lock in the cache). What it says
    goes to `<key>.log` in the cache; a copy it could not make leaves that log as `<key>.failed`,
    so that later starts say why and stop trying (a killed helper leaves only the log: the next
    start tries again)."""
    model, products = sys.argv[1:] if argv is None else argv
    os.nice(19)
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    key = copy_key(Path(model), INT8_RECIPES[products])
    with open(folder / f"{key}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        log = folder / f"{key}.log"
        with open(log, "w") as said, contextlib.redirect_stderr(said):
            try:
                made = int8_for(Path(model), asked=True, products=products) is not None
            except Exception:  # said in the log, then float32 for good
                traceback.print_exc()
                made = False
        if made:
            log.unlink()
            return 0
        os.replace(log, failure_file(key))
        return 1


if __name__ == "__main__":
    sys.exit(main())
