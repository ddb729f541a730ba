"""networks/cache.py and networks/loading.py: the cache of converted and int8 networks, and the
float32 net that plays whenever the int8 speed-up fails (a missing package, an onnxruntime error,
a damaged or half-written cache file, a cache that cannot be written), each said in one stderr
line; a damaged conversion is made again, an unwritable cache means converting in memory."""

import errno
import fcntl
import gzip
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
import pytest

from dosaku import weights
from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.launch.factory import build_evaluator
from dosaku.launch.flags import parse_flags
from dosaku.networks import cache, int8_copy, int8_transformer, quantize
from dosaku.networks.loading import load_network
from tests.test_katago_convert import TinyWriter, random_inputs, transformer_writer


@pytest.fixture(autouse=True)
def own_cache(tmp_path, monkeypatch):
    """Each test starts from an empty cache of its own."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(quantize, "CALIBRATION", ((9, 7.0, 1),))  # one game keeps it short
    return tmp_path / "xdg" / "dosaku"


def miniature_transformer(folder, structure: str = "real-in-miniature"):
    """A KataGo transformer model file of test_katago_convert's miniature structures."""
    path = folder / "tf.bin.gz"
    path.write_bytes(gzip.compress(transformer_writer(structure).encode(binary=True)))
    return path


@pytest.fixture
def katago_file(tmp_path):
    """A tiny KataGo model file with random weights."""
    path = tmp_path / "tiny.bin.gz"
    path.write_bytes(gzip.compress(TinyWriter(14, seed=3).model(2).encode(binary=True)))
    return path


@pytest.fixture
def float_net(tmp_path):
    """A float32 ONNX net that is not one of the shipped ones (so nothing ships its int8)."""
    return shutil.copy(weights.model_path("dosaku-zero-9x9"), tmp_path / "net.onnx")


def stderr_lines(capfd) -> list[str]:
    return [line for line in capfd.readouterr().err.splitlines() if line.strip()]


def outputs(model: OnnxModel) -> dict:
    spatial, glob = random_inputs(np.random.default_rng(0), 2, 9, 9)
    return model.run(spatial, glob)


def is_int8(model: OnnxModel) -> bool:
    graph = onnx.load_from_string(model.source) if isinstance(model.source, bytes) \
        else onnx.load(str(model.source))
    return any(node.op_type in ("QuantizeLinear", "DynamicQuantizeMatMul")
               for node in graph.graph.node)


def unwritable_cache(tmp_path, monkeypatch):
    """A cache directory that cannot be created (a file stands in its way): fails as a read-only
    one does, even for root."""
    blocker = tmp_path / "blocker"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))


# ------------------------------------------------------------------ conversions

def test_a_katago_file_is_converted_once_and_then_read_from_the_cache(katago_file, own_cache,
                                                                      capfd, monkeypatch):
    first = cache.onnx_for(katago_file)
    assert first.parent == own_cache and len(stderr_lines(capfd)) == 1
    stamp = first.stat().st_mtime_ns
    monkeypatch.setattr("dosaku.networks.katago_convert.build_onnx",
                        lambda *_: pytest.fail("rebuilt"))
    assert cache.onnx_for(katago_file) == first and first.stat().st_mtime_ns == stamp
    assert stderr_lines(capfd) == []
    assert cache.onnx_for(first) == first  # an .onnx file is used as it is


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_conversion_is_made_again(katago_file, capfd, damage):
    first = cache.onnx_for(katago_file)
    good = first.read_bytes()
    first.write_bytes(good[:len(good) // 2] if damage == "truncated"
                      else good[:100] + b"\xff" * 64 + good[164:])
    capfd.readouterr()
    again = cache.onnx_for(katago_file)
    assert again.read_bytes() == good
    lines = stderr_lines(capfd)
    assert "damaged" in lines[0] and "converting" in lines[1]


def test_an_unwritable_cache_means_converting_in_memory(katago_file, tmp_path, monkeypatch,
                                                        capfd):
    on_disk = OnnxModel(cache.onnx_for(katago_file))
    unwritable_cache(tmp_path, monkeypatch)
    capfd.readouterr()
    model = cache.onnx_for(katago_file)
    assert isinstance(model, bytes)
    assert "converted in memory" in stderr_lines(capfd)[-1]
    got, expected = outputs(OnnxModel(model)), outputs(on_disk)
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name])


def ended_pid() -> int:
    """The pid of a process that has ended."""
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def test_a_half_written_conversion_is_never_read(katago_file, own_cache):
    """Another engine's file in the writing is left alone and never read; one whose writer is
    gone (killed) is removed by the next writer of that key."""
    first = cache.onnx_for(katago_file)
    key = first.stem.rsplit("-", 1)[0]
    writing = own_cache / f"{key}.{os.getppid()}.partial"
    orphan = own_cache / f"{key}.{ended_pid()}.partial"
    for partial in writing, orphan:
        partial.write_bytes(first.read_bytes()[:1000])
    first.unlink()
    assert cache.onnx_for(katago_file).read_bytes() != writing.read_bytes()
    assert writing.exists() and not orphan.exists()


# ------------------------------------------------------------------ int8

def test_int8_is_quantized_once_then_read_from_the_cache(float_net, own_cache, capfd,
                                                         monkeypatch):
    played, original = load_network(float_net, int8=True)
    assert is_int8(played) and original == float_net
    assert played.source.parent == own_cache
    assert "quantizing" in stderr_lines(capfd)[0]
    monkeypatch.setattr(quantize, "quantize", lambda *_: pytest.fail("quantized again"))
    again, _ = load_network(float_net, int8=True)
    assert again.source == played.source and stderr_lines(capfd) == []


def test_the_shipped_nets_bring_their_int8_copies(monkeypatch, capfd):
    """Our ONNX nets ship with their int8 copies (KataGo's default is a .bin.gz: below)."""
    monkeypatch.setattr(quantize, "quantize", lambda *_: pytest.fail("a shipped net quantized"))
    ours = [n for n in weights.shipped_names() if weights.model_path(n).suffix == ".onnx"]
    assert len(ours) == 4
    for name in ours:
        played, original = load_network(weights.model_path(name), int8=True)
        assert played.source == weights.int8_model_path(name) and is_int8(played)
        assert original == weights.model_path(name)
    assert stderr_lines(capfd) == []


def test_the_transformer_default_plays_float32_unless_int8_is_asked_for(monkeypatch, capfd):
    """Left to the net (int8=None) on a CPU with VNNI, a transformer is not quantized: its
    int8 copy has not been judged by play there; a convolution net takes its copy."""
    monkeypatch.setattr(int8_copy, "cpu_plays_transformers_in_int8", lambda: False)
    monkeypatch.setattr(quantize, "quantize", lambda *_: pytest.fail("quantized by default"))
    played, original = load_network(weights.default_model_path(), int8=None)
    assert original is None and not is_int8(played)
    assert "transformer nets are not quantized by default" in " ".join(stderr_lines(capfd))
    played, original = load_network(weights.model_path("dosaku-b4c64"), int8=None)
    assert is_int8(played) and original == weights.model_path("dosaku-b4c64")


def test_on_avx2_a_transformer_plays_float32_while_a_helper_makes_its_copy(
        tmp_path, monkeypatch, capfd):
    """Left to the net on a CPU with AVX2 and no VNNI, a transformer's first start plays
    float32 at once and a helper process makes the copy of every product in the cache (one
    helper at a time: another finds the lock held and leaves); the next start plays it."""
    monkeypatch.setattr(int8_copy, "cpu_plays_transformers_in_int8", lambda: True)
    monkeypatch.setattr(quantize, "quantize", lambda *_: pytest.fail("quantized in process"))
    path = miniature_transformer(tmp_path)
    source = cache.onnx_for(path)
    key = int8_copy.copy_key(source, int8_transformer.RECIPES["all"].name)
    cache.cache_dir().mkdir(parents=True, exist_ok=True)
    with open(cache.cache_dir() / f"{key}.lock", "w") as lock:  # a helper at work
        fcntl.flock(lock, fcntl.LOCK_EX)
        assert int8_copy.main([str(source), "all"]) == 0  # leaves at once
        assert cache.lookup(key) is None
    played, original = load_network(path, int8=None, products="all")
    assert original is None and not is_int8(played)
    assert "made in the background" in " ".join(stderr_lines(capfd))
    deadline = time.monotonic() + 300
    while cache.lookup(key) is None:
        assert time.monotonic() < deadline, "the helper made no copy"
        time.sleep(0.5)
    played, original = load_network(path, int8=None, products="all")
    assert is_int8(played) and original == source and played.source == cache.lookup(key)
    graph = onnx.load(str(played.source)).graph
    assert not any(int8_transformer.role(n) for n in graph.node if n.op_type == "MatMul")
    assert stderr_lines(capfd) == []


def test_a_helper_that_fails_says_why_and_later_starts_stop_trying(tmp_path, monkeypatch,
                                                                    capfd):
    """The helper's failure stays in the cache as `<key>.failed`: later starts play float32
    at once, say why and start no helper, until the user deletes the file."""
    monkeypatch.setattr(int8_copy, "cpu_plays_transformers_in_int8", lambda: True)
    monkeypatch.setattr(os, "nice", lambda _: 0)  # the helper runs in this process here

    def broken(model, out, products):
        raise RuntimeError("calibration broke")
    monkeypatch.setattr(quantize, "quantize", broken)
    path = miniature_transformer(tmp_path)
    source = cache.onnx_for(path)
    key = int8_copy.copy_key(source, int8_transformer.RECIPES["all"].name)
    assert int8_copy.main([str(source), "all"]) == 1
    failed = cache.cache_dir() / f"{key}.failed"
    assert "calibration broke" in failed.read_text()
    assert not (cache.cache_dir() / f"{key}.log").exists()
    capfd.readouterr()

    def no_helper(*_, **__):
        pytest.fail("a helper started again")
    monkeypatch.setattr(int8_copy.subprocess, "Popen", no_helper)
    played, original = load_network(path, int8=None, products="all")
    assert original is None and not is_int8(played)
    said = " ".join(stderr_lines(capfd))
    assert "failed in an earlier start" in said and "calibration broke" in said
    assert str(failed) in said


def test_a_file_is_hashed_anew_once_it_changes(tmp_path):
    """The per-process memory of file hashes never outlives the file's contents."""
    path = tmp_path / "net.onnx"
    path.write_bytes(b"a" * 100)
    first = cache.sha256_of(path)
    replacement = tmp_path / "new"
    replacement.write_bytes(b"b" * 100)
    os.replace(replacement, path)
    assert cache.sha256_of(path) != first == cache.sha256_of(b"a" * 100)
    assert cache.sha256_of(path) == cache.sha256_of(b"b" * 100)


def test_a_shipped_int8_copy_that_does_not_match_its_card_is_not_used(tmp_path, monkeypatch):
    shipped = tmp_path / "weights"
    shutil.copytree(weights.HERE, shipped, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(weights, "HERE", shipped)
    monkeypatch.setattr(weights, "INT8_DIR", shipped / "int8")
    net = weights.model_path("dosaku-zero-9x9")
    assert weights.shipped_int8_for(net) == shipped / "int8" / "dosaku-zero-9x9.onnx"
    copy = weights.int8_model_path("dosaku-zero-9x9")
    copy.write_bytes(copy.read_bytes()[:-10])
    assert weights.shipped_int8_for(net) is None


def float32_with_one_line(float_net, capfd, why: str):
    played, original = load_network(float_net, int8=True)
    assert played.source == float_net and original is None and not is_int8(played)
    lines = stderr_lines(capfd)
    assert lines[-1].startswith("dosaku: ") and lines[-1].endswith("playing float32")
    assert why in lines[-1], lines
    assert sum(line.endswith("playing float32") for line in lines) == 1
    return played


@pytest.mark.parametrize("structure", ["real-in-miniature", "gqa-fixed-rope"])
def test_a_transformer_net_is_quantized_by_its_own_recipe(structure, tmp_path, monkeypatch):
    """A KataGo transformer net converted here gets an int8 copy in the cache by the
    transformer recipe, whose outputs stay near the float net's; with grouped KV heads the
    smoothing of the attention output cannot be folded into V's weights and is a Mul."""
    path = miniature_transformer(tmp_path, structure)
    monkeypatch.setattr(quantize, "TRANSFORMER_CALIBRATION", ((9, 7.0, 1, 30),))
    played, original = load_network(path, int8=True, products="ffn")
    assert original is not None and is_int8(played)
    assert played.source.stem.startswith(cache.Path(original).stem)
    assert int8_transformer.RECIPES["ffn"].name in played.source.name
    ours, theirs = outputs(played), outputs(OnnxModel(original))
    for key in ("value", "score", "policy"):
        np.testing.assert_allclose(ours[key], theirs[key], atol=0.05 * np.abs(theirs[key]).max())
    smoothed = [n for n in onnx.load(str(played.source)).graph.node
                if n.output[0].endswith("_smoothed")]
    assert len(smoothed) == (structure == "gqa-fixed-rope")  # its one attention block


def test_int8_products_all_quantizes_every_product_into_a_copy_of_its_own(tmp_path, monkeypatch):
    """--int8-products all (launch/factory.py hands it to load_network): every named product
    of the transformer in int8, cached under its recipe's name beside the ffn recipe's."""
    path = miniature_transformer(tmp_path)
    monkeypatch.setattr(quantize, "TRANSFORMER_CALIBRATION", ((9, 7.0, 1, 30),))
    args = parse_flags(["--model", str(path), "--int8", "--int8-products", "all"])
    played = build_evaluator(args).model
    assert int8_transformer.RECIPES["all"].name in played.source.name
    graph = onnx.load(str(played.source)).graph
    assert not any(int8_transformer.role(n) for n in graph.node if n.op_type == "MatMul")
    ffn, _ = load_network(path, int8=True, products="ffn")
    assert ffn.source != played.source
    assert int8_transformer.RECIPES["ffn"].name in ffn.source.name


def test_attention_the_converter_did_not_name_plays_float32(tmp_path, monkeypatch, capfd):
    path = miniature_transformer(tmp_path)
    graph = onnx.load(str(cache.onnx_for(path)))
    for node in graph.graph.node:
        node.name = ""
    unnamed = tmp_path / "unnamed.onnx"
    onnx.save(graph, str(unnamed))
    monkeypatch.setattr(quantize, "self_play_inputs", lambda *_: pytest.fail("calibrated"))
    float32_with_one_line(unnamed, capfd, "nets with attention not converted by this engine")
    with pytest.raises(ValueError, match="not quantized"):
        quantize.quantize(unnamed, tmp_path / "int8.onnx")
    assert not (tmp_path / "int8.onnx").exists()


def test_a_missing_package_means_float32(float_net, monkeypatch, capfd):
    monkeypatch.setitem(sys.modules, "dosaku.networks.quantize", None)  # import fails
    float32_with_one_line(float_net, capfd, "int8 unavailable")


def test_an_onnxruntime_error_means_float32(float_net, monkeypatch, capfd):
    def fails(*_):
        from onnxruntime.capi.onnxruntime_pybind11_state import Fail
        raise Fail("quantization failed")
    monkeypatch.setattr(quantize, "quantize_int8", fails)
    float32_with_one_line(float_net, capfd, "quantization failed")


@pytest.mark.parametrize("damage", ["truncated", "corrupt"])
def test_a_damaged_int8_copy_means_float32_and_is_made_again_next_time(float_net, capfd,
                                                                       damage):
    played, _ = load_network(float_net, int8=True)
    copy = played.source
    good = copy.read_bytes()
    copy.write_bytes(good[:len(good) // 2] if damage == "truncated"
                     else good[:200] + b"\x00" * 64 + good[264:])
    capfd.readouterr()
    float32_with_one_line(float_net, capfd, "damaged")
    assert not copy.exists()
    again, _ = load_network(float_net, int8=True)
    assert is_int8(again)


def test_an_int8_copy_onnxruntime_refuses_means_float32(float_net, own_cache, capfd):
    played, _ = load_network(float_net, int8=True)
    garbage = b"not an onnx model" * 10
    played.source.unlink()
    # a file whose name matches its contents, so only loading it can find the fault
    key = played.source.stem.rsplit("-", 1)[0]
    (own_cache / f"{key}-{cache.sha256_of(garbage)[:16]}.onnx").write_bytes(garbage)
    capfd.readouterr()
    float32_with_one_line(float_net, capfd, "does not load")


def test_a_half_written_int8_copy_is_never_read(float_net, own_cache):
    played, _ = load_network(float_net, int8=True)
    key = played.source.stem.rsplit("-", 1)[0]
    (own_cache / f"{key}.4242.partial").write_bytes(played.source.read_bytes()[:500])
    again, _ = load_network(float_net, int8=True)
    assert again.source == played.source and is_int8(again)


def test_an_unwritable_cache_means_float32(float_net, tmp_path, monkeypatch, capfd):
    unwritable_cache(tmp_path, monkeypatch)
    float32_with_one_line(float_net, capfd, "int8 copy not made")


def test_a_full_disk_means_float32(float_net, monkeypatch, capfd):
    def disk_full(model, out, products):
        out.write_bytes(b"\0" * 10)
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(quantize, "quantize", disk_full)
    float32_with_one_line(float_net, capfd, "No space left on device")
    assert not any(cache.cache_dir().glob("*"))  # the partial file went with the failure


def test_a_katago_file_in_an_unwritable_cache_plays_float32_from_memory(katago_file, tmp_path,
                                                                        monkeypatch, capfd):
    unwritable_cache(tmp_path, monkeypatch)
    played, original = load_network(katago_file, int8=True)
    assert isinstance(played.source, bytes) and original is None
    lines = stderr_lines(capfd)
    assert "converted in memory" in lines[-2] and lines[-1].endswith("playing float32")
