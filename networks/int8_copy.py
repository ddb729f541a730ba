"""The int8 copy of a float32 network that plays in its place: the copy shipped beside a shipped
net, else the one in the user's cache (networks/cache.py), else one quantized now
(networks/quantize.py) into that cache. Any failure on the way leaves float32 playing, said in
one line on stderr."""

from __future__ import annotations

import mmap
from pathlib import Path

from dosaku.engine.evaluators.onnx_options import DEFAULT_INT8_PRODUCTS
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


def int8_for(model: Model, asked: bool = True,
             products: str = DEFAULT_INT8_PRODUCTS) -> Path | None:
    """The int8 copy of a float32 ONNX model, or None after saying on stderr why float32 plays:
    the copy shipped beside a shipped net, else the cached one, else, for a net a recipe
    suits, quantized now (calibration self-play, up to a minute) into the cache; a
    transformer's by the recipe of `products` (int8_transformer.RECIPES). Unless the user
    `asked` for int8, transformer nets play float32: their copy runs about as fast
    (docs/performance.md) and would cost a first start its calibration."""
    from dosaku.weights import shipped_int8_for
    if isinstance(model, Path):
        shipped = shipped_int8_for(model)
        if shipped is not None:
            return shipped
    if not asked and names_transformer_products(model):
        note("playing float32: transformer nets are not quantized by default (--int8 to do so)")
        return None
    try:
        from dosaku.networks.quantize import load_graph, quantize, recipe, unsupported
    except ImportError as err:
        note(f"int8 unavailable ({err}): playing float32")
        return None
    graph = load_graph(model)
    stem = model.stem if isinstance(model, Path) else "converted"
    key = f"{stem}-{sha256_of(model)[:16]}-{recipe(graph, products)}"
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
