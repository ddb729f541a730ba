"""The network a game plays on: the file the user named (converted if it is KataGo's), its int8
copy where asked for or where it pays, and float32 instead whenever the int8 copy fails, at any
step."""

from __future__ import annotations

from pathlib import Path

from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.networks.cache import Model, note, onnx_for
from dosaku.networks.int8_copy import int8_for


def load_network(path: str | Path, int8: bool | None, threads: int = 1,
                 provider: str = "cpu",
                 products: str | None = None) -> tuple[OnnxModel, Model | None]:
    """(the model that plays, the float32 model it was quantized from or None). `int8` True or
    False is the user's choice; None leaves it to the net (int8_for); `products` is the recipe
    of a transformer's copy (None: this CPU's). int8 is a speed-up: when its copy cannot be
    made, checked or loaded, float32 plays, said on stderr."""
    source = onnx_for(path)
    if int8 is not False:
        copy = int8_for(source, asked=int8 is True, products=products)
        if copy is not None:
            try:
                return OnnxModel(copy, threads=threads, provider=provider), source
            except Exception as err:  # onnxruntime refuses the file: play the float net
                note(f"int8 copy {copy} does not load ({type(err).__name__}: {err}): "
                     "playing float32")
    return OnnxModel(source, threads=threads, provider=provider), None
