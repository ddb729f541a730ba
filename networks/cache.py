"""The user's cache of converted and quantized networks, and what the engine plays when the
cache fails (networks/int8_copy.py does the same for the int8 step).

A cached file is named `<key>-<first 16 hex digits of its own sha256>.onnx`, where the key names
what it was made from (the source file's name and hash and the converter's version, and for int8
copies the recipe). A file is used only while its contents still hash to its name, so a copy cut
short or damaged after it was written is never loaded: a damaged conversion is made again, a
damaged int8 copy is removed and float32 plays. Files are written beside their final name and
renamed into place, so engines started side by side never read a half-written one.

Conversion is required, int8 is a speed-up: a cache that cannot be written means converting in
memory, while an int8 copy that cannot be made, checked or loaded means playing float32, each
said in one line on stderr.
"""

from __future__ import annotations

import hashlib
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from importlib import import_module
from pathlib import Path
from typing import Callable

from dosaku.engine.evaluators.onnx_options import is_onnx_file

Model = Path | bytes  # an ONNX file, or a serialized model held in memory
CONVERTER = "c4f"  # part of a conversion's cache name: change it when katago_convert's graphs do


class DamagedCopy(OSError):
    """The cache held only damaged copies for a key (now removed where it allowed)."""


def note(text: str) -> None:
    """One line on stderr, where GTP clients show an engine's messages."""
    print(f"dosaku: {text}", file=sys.stderr, flush=True)


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "dosaku"


def sha256_of(model: Model) -> str:
    if isinstance(model, bytes):
        return hashlib.sha256(model).hexdigest()
    stat = os.stat(model)
    return _file_sha256(str(model), stat.st_ino, stat.st_size, stat.st_mtime_ns)


@lru_cache(maxsize=8)
def _file_sha256(path: str, inode: int, size: int, mtime_ns: int) -> str:
    """A file's sha256, once per process while the file stays as it was: a start names the
    converted net's int8 copy by the hash its own lookup has just checked (40 MB)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def lookup(key: str) -> Path | None:
    """The cached file for `key` whose contents match its name, None when there is none.
    DamagedCopy when there were only damaged ones: they are removed (where the cache allows),
    so that the next start makes the file again."""
    folder = cache_dir()
    if not folder.is_dir():
        return None
    damaged = []
    for candidate in sorted(folder.glob(f"{key}-*.onnx")):
        digest = candidate.stem[len(key) + 1:]
        if len(digest) != 16 or "-" in digest:
            continue  # a longer key that begins with this one
        if sha256_of(candidate)[:16] == digest:
            return candidate
        damaged.append(candidate)
        try:
            candidate.unlink()
        except OSError:
            pass
    if damaged:
        raise DamagedCopy(f"{damaged[0]} is damaged (its contents do not match its name; "
                          "removed)")
    return None


def store(key: str, write: Callable[[Path], None]) -> Path:
    """Have `write(path)` make the file for `key` in the cache, then publish it under its hash.
    OSError when the cache cannot be written (read-only, full)."""
    folder = cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    remove_orphans(folder, key)
    partial = folder / f"{key}.{os.getpid()}.partial"
    try:
        write(partial)
        os.chmod(partial, 0o644)
        target = folder / f"{key}-{sha256_of(partial)[:16]}.onnx"
        os.replace(partial, target)
        return target
    finally:
        if partial.exists():
            partial.unlink()


def remove_orphans(folder: Path, key: str) -> None:
    """Remove the partial files of `key` whose writer is gone (killed, or the machine stopped):
    store() removes its own on any error, but nothing else would remove these."""
    for partial in folder.glob(f"{key}.*.partial"):
        pid = partial.suffixes[-2][1:]
        if pid.isdigit() and not process_alive(int(pid)):
            try:
                partial.unlink()
            except OSError:
                pass


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's
        return True
    return True


def onnx_for(path: str | Path) -> Model:
    """The ONNX model of a network file: the file itself if it is ONNX; for a KataGo file its
    cached conversion, converted now when the cache lacks it (or held a damaged copy), and kept
    in memory when the cache cannot be written. Conversions are full-board graphs
    (katago_convert.build_onnx): the engine sizes a net's input to the board."""
    path = Path(path)
    if is_onnx_file(path):
        return path
    key = f"{path.name.split('.')[0]}-{sha256_of(path)[:16]}-{CONVERTER}"
    try:
        found = lookup(key)
    except OSError as err:  # a damaged copy, or a cache that cannot be read: convert anew
        note(str(err))
        found = None
    if found is not None:
        return found
    from dosaku.networks import katago_bin
    note(f"converting {path} to ONNX (once; cached in {cache_dir()})")
    with ThreadPoolExecutor(1) as pool:  # the converter imports onnx (most of a second)
        converter = pool.submit(import_module, "dosaku.networks.katago_convert")
        model = katago_bin.load(path)  # meanwhile: gunzip releases the GIL
        proto = converter.result().build_onnx(model, full_board=True)
    try:
        return store(key, lambda out: out.write_bytes(proto.SerializeToString()))
    except OSError as err:
        note(f"cannot cache the converted network in {cache_dir()} ({err}): converted in "
             "memory, again at every start")
        return proto.SerializeToString()
