"""Run a command as on an AVX2-only CPU, on a CPU with AVX-512 or VNNI: onnxruntime then runs the
kernels an AVX2-only CPU gets, so its speeds (int8 against float32, Dosaku against KataGo's
Eigen build, which is compiled for AVX2 anyway) can be judged on such a machine.

    python -m dosaku.bench.avx2_only build            # once per onnxruntime version
    python -m dosaku.bench.avx2_only run -- COMMAND ...

`build` copies the installed onnxruntime package into DIR (default ~/.cache/dosaku-avx2-only),
replacing each cpuid and xgetbv instruction of its native library by a trap, and compiles the
preloaded library (bench/avx2_only.c) that answers those traps with the CPU's features less
AVX-512, VNNI, AVX-VNNI, bf16 and AMX. `run` starts COMMAND with that copy first on PYTHONPATH,
the trap handler preloaded, in a private mount namespace where /proc/cpuinfo lists none of those
flags either (what engine/evaluators/onnx_options.py reads), and with numba compiling for
Haswell (AVX2). Everything else (numpy, KataGo, the CPU's own speed) is unchanged: a Zen 4 so
run has Zen 4's cores with Zen 3's instruction set. Needs Linux, root (the mount), gcc and
objdump (binutils).
"""

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

DROPPED_FLAGS = frozenset((  # the /proc/cpuinfo flags of what bench/avx2_only.c masks out
    "avx512f", "avx512dq", "avx512ifma", "avx512cd", "avx512bw", "avx512vl", "avx512vbmi",
    "avx512_vbmi2", "gfni", "avx512_vnni", "avx512_bitalg", "avx512_vpopcntdq", "avx512_bf16",
    "avx512_fp16", "avx512_vp2intersect", "avx512_4vnniw", "avx512_4fmaps", "avx_vnni",
    "avx_ifma", "avx_vnni_int8", "avx_ne_convert", "amx_bf16", "amx_tile", "amx_int8"))
DEFAULT_DIR = Path.home() / ".cache" / "dosaku-avx2-only"
SHIM = Path(__file__).with_suffix(".c")
NUMBA_CPU = "haswell"  # an AVX2 + FMA target without AVX-512


def trap_sites(library: Path) -> dict[str, list[tuple[int, bytes]]]:
    """The library's cpuid and xgetbv instructions by objdump: {"cpuid": [(file offset,
    instruction bytes)], "xgetbv": [...]}. Code addresses are file offsets in these builds
    (checked against the bytes by `patch`)."""
    text = subprocess.run(["objdump", "-d", str(library)], capture_output=True, text=True,
                          check=True).stdout
    sites: dict[str, list[tuple[int, bytes]]] = {"cpuid": [], "xgetbv": []}
    for m in re.finditer(r"^\s*([0-9a-f]+):\s+((?:[0-9a-f]{2} )+)\s*(cpuid|xgetbv)\s*$", text,
                         re.M):
        sites[m.group(3)].append((int(m.group(1), 16), bytes.fromhex(m.group(2))))
    return sites


def patch(library: Path) -> str:
    """Replace the library's cpuid and xgetbv instructions in place by int3 and nops; returns
    AVX2_SITES for the trap handler."""
    data = bytearray(library.read_bytes())
    listed = {}
    for op, sites in trap_sites(library).items():
        for offset, code in sites:
            if data[offset:offset + len(code)] != code:
                raise ValueError(f"{library.name}: code at {offset:#x} is not at that file offset")
            data[offset:offset + len(code)] = b"\xcc" + b"\x90" * (len(code) - 1)
        listed[op[0]] = ",".join(f"{offset:x}" for offset, _ in sites)
    if not listed["c"]:
        raise ValueError(f"{library.name} has no cpuid instruction to trap")
    library.write_bytes(data)
    return f"c:{listed['c']};x:{listed['x']}"


def masked_cpuinfo(text: str) -> str:
    """/proc/cpuinfo's text with DROPPED_FLAGS taken off every flags line."""
    lines = []
    for line in text.splitlines(keepends=True):
        if line.startswith("flags"):
            key, _, flags = line.partition(":")
            kept = [f for f in flags.split() if f not in DROPPED_FLAGS]
            line = f"{key}: {' '.join(kept)}\n"
        lines.append(line)
    return "".join(lines)


def build(out: Path) -> Path:
    """Lay out `out`: site/onnxruntime (the patched copy), sites.txt, cpuinfo, avx2_only.so."""
    source = Path(importlib.util.find_spec("onnxruntime").origin).parent
    site = out / "site" / "onnxruntime"
    if site.exists():
        shutil.rmtree(site)
    shutil.copytree(source, site)
    (library,) = (site / "capi").glob("onnxruntime_pybind11_state*.so")
    (out / "sites.txt").write_text(patch(library))
    (out / "cpuinfo").write_text(masked_cpuinfo(Path("/proc/cpuinfo").read_text()))
    subprocess.run(["gcc", "-O2", "-shared", "-fPIC", "-o", str(out / "avx2_only.so"), str(SHIM),
                    "-ldl"], check=True)
    return out


def command(out: Path, argv: list[str]) -> list[str]:
    """`argv` under the AVX2-only view `build` laid out in `out`."""
    env = {"LD_PRELOAD": str(out / "avx2_only.so"),
           "AVX2_LIB": str(out / "site" / "onnxruntime"),
           "AVX2_SITES": (out / "sites.txt").read_text(),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(out / "site"),
                                                       os.environ.get("PYTHONPATH")])),
           "NUMBA_CPU_NAME": NUMBA_CPU}
    setup = f'mount --bind "{out / "cpuinfo"}" /proc/cpuinfo && exec env "$@"'
    return ["unshare", "-m", "sh", "-c", setup, "avx2_only",
            *[f"{k}={v}" for k, v in env.items()], *argv]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m dosaku.bench.avx2_only",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("action", choices=("build", "run"))
    ap.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"default {DEFAULT_DIR}")
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index("--") if "--" in argv else len(argv)
    args, cmd = ap.parse_args(argv[:cut]), argv[cut + 1:]
    if args.action == "build":
        args.dir.mkdir(parents=True, exist_ok=True)
        print(build(args.dir))
        return 0
    if not cmd:
        ap.error("run needs a command after --")
    if not (args.dir / "sites.txt").exists():
        ap.error(f"{args.dir} has no build: python -m dosaku.bench.avx2_only build")
    return subprocess.run(command(args.dir, cmd)).returncode


if __name__ == "__main__":
    sys.exit(main())
