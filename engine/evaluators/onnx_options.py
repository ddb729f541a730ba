"""What can be said about ONNX networks before onnxruntime is loaded: which model files are ONNX
(anything else is a KataGo model to convert first), the execution providers a user may name, and
whether the CPU runs int8 networks fast. Imports nothing, so run_engine builds its flags from it and
still answers GTP at once; engine/evaluators/onnx_evaluator.py hands the providers to
onnxruntime."""

from pathlib import Path

PROVIDERS = {  # --provider name -> onnxruntime execution provider
    "cpu": "CPUExecutionProvider",
    "cuda": "CUDAExecutionProvider",
    "coreml": "CoreMLExecutionProvider",
    "dml": "DmlExecutionProvider",
}


def is_onnx_file(path: str | Path) -> bool:
    """Whether a model path names an ONNX file (by its suffix, in any case)."""
    return Path(path).suffix.lower() == ".onnx"


# the /proc/cpuinfo flag of the CPUs where onnxruntime's int8 convolutions beat float32 at
# equal time (docs/performance.md#int8-on-an-avx2-only-cpu): AVX2, which every CPU with VNNI,
# AVX-VNNI or AMX has too
INT8_FAST_FLAG = "avx2"


# the flags of int8 dot-product instructions that add uint8 x int8 products into 32-bit sums
# without the saturating 16-bit step of AVX2's (AVX-512 VNNI, AVX-VNNI, AMX)
INT8_DOT_FLAGS = ("avx512_vnni", "avx_vnni", "amx_int8")


# --int8-products NAME: the recipes of a transformer net's int8 copy (the products
# networks/int8_transformer.RECIPES quantizes), by the name of their copies in the cache (change
# a recipe's name with the recipe)
INT8_RECIPES = {"ffn": "int8-ffn-up-attention-out-v1", "all": "int8-all-products-w7-v1"}
INT8_PRODUCTS = tuple(INT8_RECIPES)
DEFAULT_INT8_PRODUCTS = "ffn"


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The CPU's feature flags from Linux's /proc/cpuinfo (or the text given); empty where
    there is none to read."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text()
        except OSError:
            return set()
    flags = set()
    for line in cpuinfo.splitlines():
        if line.startswith("flags"):
            flags.update(line.partition(":")[2].split())
    return flags


def cpu_runs_int8_fast(cpuinfo: str | None = None) -> bool:
    """Whether onnxruntime's int8 kernels beat float32 on this CPU (it has AVX2): what decides
    that `--int8` is on by default."""
    return INT8_FAST_FLAG in cpu_flags(cpuinfo)


def cpu_has_int8_dot(cpuinfo: str | None = None) -> bool:
    """Whether the CPU multiplies uint8 by int8 without saturating sums (VNNI or AMX), so that
    onnxruntime needs no precision work-around for full-range int8 weights."""
    return any(flag in cpu_flags(cpuinfo) for flag in INT8_DOT_FLAGS)


def cpu_plays_transformers_in_int8(cpuinfo: str | None = None) -> bool:
    """Whether transformer nets play an int8 copy by default: on CPUs with AVX2 and no int8 dot
    products, where the copy of every product won at equal time (docs/strength.md#int8-and-float32);
    with VNNI or AMX no match has judged it yet."""
    return cpu_runs_int8_fast(cpuinfo) and not cpu_has_int8_dot(cpuinfo)


def int8_products_for_cpu(cpuinfo: str | None = None) -> str:
    """The recipe of a transformer's int8 copy where --int8-products is not given: every product
    where transformer nets play int8 by default, else DEFAULT_INT8_PRODUCTS."""
    return "all" if cpu_plays_transformers_in_int8(cpuinfo) else DEFAULT_INT8_PRODUCTS
