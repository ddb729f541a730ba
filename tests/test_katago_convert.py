"""KataGo model parsing and .bin -> ONNX conversion, checked against an independent numpy pass.

The real b6c96 net (version 8) and transformer net b10c384h6nbttflrs (version 15) come from
../shared; versions 10-17 and the transformer structures the real file does not use are checked
with tiny synthetic models written by this test in KataGo's file format (binary and text floats).
"""

import gzip
import re
from collections import Counter

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from dosaku.engine.evaluators.features import NUM_GLOBAL, NUM_SPATIAL
from dosaku.networks import katago_bin as kb
from dosaku.networks import katago_convert as kc
from tests.katago_reference import forward as reference_forward

B6_SHA = "f5d32604e3675c480c7c8f6aa579a1ea857135628a0afccc8fa56330fbacd38d"
B10_SHA = "0ba27eced5180b3e3d0b898b280c541112989765e789d1eb6cd0d31b2b2c1229"


@pytest.fixture(scope="module")
def b6(b6c96_file):
    return kb.load(b6c96_file)


@pytest.fixture(scope="module")
def b6_session(b6):
    proto = kc.build_onnx(b6)
    return ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])


def random_inputs(rng, n, h, w, board_h=None, board_w=None, num_spatial=NUM_SPATIAL,
                  num_global=NUM_GLOBAL):
    """Random 0/1 planes with plane 0 = on-board mask (board in the top-left corner)."""
    spatial = (rng.random((n, num_spatial, h, w)) < 0.3).astype(np.float32)
    spatial[:, 0] = 0.0
    spatial[:, 0, :board_h or h, :board_w or w] = 1.0
    spatial *= spatial[:, 0:1]
    glob = rng.normal(0, 0.5, (n, num_global)).astype(np.float32)
    return spatial, glob


def run(session, spatial, glob):
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, {"spatial": spatial, "global": glob})))


def assert_matches_reference(model, session, spatial, glob, atol=1e-4):
    got = run(session, spatial, glob)
    ref = reference_forward(model, spatial, glob)
    n, _, h, w = spatial.shape
    on_board = np.append(spatial[:, 0].reshape(n, -1) > 0, np.ones((n, 1), bool), axis=1)
    for ch, key in enumerate(["policy", "policy_optimistic"][:model.policy.channels]):
        np.testing.assert_allclose(got[key][on_board], ref["policy"][:, ch][on_board],
                                   atol=atol, rtol=1e-4, err_msg=key)
        assert np.all(got[key][~on_board] <= -4000.0)
    for key in ("value", "score"):
        np.testing.assert_allclose(got[key], ref[key], atol=atol, rtol=1e-4, err_msg=key)
    mask = spatial[:, 0] > 0
    np.testing.assert_allclose(got["ownership"][mask], ref["ownership"][mask], atol=atol, rtol=1e-4)
    assert np.all(got["ownership"][~mask] == 0.0)
    assert got["policy"].shape == (n, h * w + 1)
    assert got["ownership"].shape == (n, h, w)
    return got


# ---------------------------------------------------------------- the real b6c96 file

def appendix_a_listing(spec):
    """(kind, name, numbers) for every layer line of the spec's Appendix A listing."""
    text = spec.read_text()
    block = text.split("## Appendix A", 1)[1].split("```", 2)[1]
    rows = []
    for line in block.splitlines():
        m = re.match(r"\s+(conv|matmul|matbias|norm|act)\s+(\S+)\s*(.*)$", line)
        if m:
            kind, name, rest = m.groups()
            nums = tuple(re.findall(r"-?\d+(?:\.\d+)?(?:e-?\d+)?", rest)) if kind != "act" else (
                re.search(r"ACTIVATION_\w+", rest).group(0),)
            rows.append((kind, name, nums))
    assert len(rows) > 60
    return rows


def our_listing(model):
    rows = []
    for layer in kb.layers(model):
        if isinstance(layer, kb.RMSNorm):
            rows.append(("rmsnorm", layer.name, (str(layer.gamma.shape[0]), f"{layer.eps:g}",
                                                 str(int(layer.spatial)))))
        elif isinstance(layer, kb.TransformerNorm):
            rows.append(("tnorm", layer.name, (str(layer.weight.shape[0]), f"{layer.eps:g}")))
        elif isinstance(layer, kb.RopeFreqs):
            rows.append(("rope", layer.name, tuple(map(str, layer.freqs.shape))))
        elif isinstance(layer, kb.RopeTheta):
            rows.append(("theta", layer.name, (f"{layer.theta:g}",)))
        elif isinstance(layer, kb.Conv):
            ky, kx, cin, cout = layer.w.shape
            nums = (f"{ky}x{kx}", cin, cout, f"{layer.dilation[0]}x{layer.dilation[1]}")
            rows.append(("conv", layer.name, tuple(re.findall(r"\d+", " ".join(map(str, nums))))))
        elif isinstance(layer, kb.MatMul):
            rows.append(("matmul", layer.name, tuple(map(str, layer.w.shape))))
        elif isinstance(layer, kb.MatBias):
            rows.append(("matbias", layer.name, (str(layer.b.shape[0]),)))
        elif isinstance(layer, kb.Norm):
            rows.append(("norm", layer.name, (str(layer.mean.shape[0]), f"{layer.eps:g}",
                                              str(int(layer.scale is not None)),
                                              str(int(layer.bias is not None)))))
        else:
            rows.append(("act", layer.name, (layer.kind,)))
    return rows


def test_b6c96_parses_whole_file_with_katago_param_count(b6c96_file, b6):
    data = gzip.decompress(b6c96_file.read_bytes())
    assert len(data) == 4_124_446
    assert b6.total_bytes == len(data)
    assert data[b6.consumed_bytes:].strip() == b""
    assert (b6.name, b6.version, b6.num_spatial, b6.num_global) == (
        "g170-b6c96-s175395328-d26788732", 8, 22, 19)
    assert kb.param_count(b6) == 1_027_911
    assert b6.sha256 == B6_SHA
    assert b6.multipliers == kb.DEFAULT_MULTIPLIERS


def test_b6c96_layers_match_appendix_a(b6, katago_network_spec):
    assert our_listing(b6) == appendix_a_listing(katago_network_spec)
    kinds = [type(b).__name__ for b in b6.trunk.blocks]
    assert kinds == ["OrdinaryBlock", "OrdinaryBlock", "GPoolBlock", "OrdinaryBlock",
                     "GPoolBlock", "OrdinaryBlock"]


def test_b6c96_norms_are_fixup(b6):
    norms = [layer for layer in kb.layers(b6) if isinstance(layer, kb.Norm)]
    assert len(norms) == 4 * 2 + 2 * 3 + 1 + 3  # blocks, trunk tip, g1 p1 v1
    for n in norms:
        assert np.all(n.mean == 0) and np.all(n.var == 1) and n.eps == pytest.approx(1e-20)
        assert (n.scale is not None) == n.name.endswith("/norm2"), n.name
        assert n.bias is not None


@pytest.mark.parametrize("h,w", [(19, 19), (13, 13), (9, 9), (10, 7)])
def test_b6c96_onnx_matches_numpy_reference(b6, b6_session, h, w):
    rng = np.random.default_rng(h * 100 + w)
    spatial, glob = random_inputs(rng, 3, h, w)
    got = assert_matches_reference(b6, b6_session, spatial, glob)
    assert got["score"].shape == (3, 4)


def test_b6c96_padded_buffer_equals_exact_board(b6, b6_session):
    rng = np.random.default_rng(5)
    spatial9, glob = random_inputs(rng, 2, 9, 9)
    padded = np.zeros((2, NUM_SPATIAL, 19, 19), np.float32)
    padded[:, :, :9, :9] = spatial9
    exact = run(b6_session, spatial9, glob)
    pad = assert_matches_reference(b6, b6_session, padded, glob)
    pol = pad["policy"][:, :-1].reshape(2, 19, 19)[:, :9, :9].reshape(2, -1)
    np.testing.assert_allclose(pol, exact["policy"][:, :-1], atol=2e-5)
    np.testing.assert_allclose(pad["policy"][:, -1], exact["policy"][:, -1], atol=2e-5)
    np.testing.assert_allclose(pad["ownership"][:, :9, :9], exact["ownership"], atol=2e-5)
    for key in ("value", "score"):
        np.testing.assert_allclose(pad[key], exact[key], atol=2e-5)


def test_b6c96_file_contract_and_metadata(b6c96_file, b6, tmp_path):
    out = kc.convert(b6c96_file, tmp_path / "b6.onnx")
    proto = onnx.load(str(out))
    assert proto.ir_version <= 13
    assert all(o.version <= 21 for o in proto.opset_import)
    meta = {p.key: p.value for p in proto.metadata_props}
    assert meta["feature_set"] == "katago-v7"
    assert meta["producer"] == "dosaku"
    assert meta["model_version"] == "8"
    assert B6_SHA in meta["source"] and b6.name in meta["source"]
    assert meta["score_outputs"] == "scoremean,scorestdev,lead,vartime"
    sess = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == ["spatial", "global"]
    assert [o.name for o in sess.get_outputs()] == ["policy", "value", "score", "ownership"]
    assert sess.get_inputs()[0].shape == ["N", 22, "H", "W"]


def test_cli_writes_the_converted_net(b6c96_file, b6c96_onnx, tmp_path):
    assert kc.main([str(b6c96_file), str(tmp_path / "cli.onnx")]) == 0
    assert (tmp_path / "cli.onnx").read_bytes() == b6c96_onnx.read_bytes()


def test_corrupt_files_are_refused(b6c96_file, tmp_path):
    data = gzip.decompress(b6c96_file.read_bytes())
    with pytest.raises(kb.ModelFormatError):
        kb.parse(data[: len(data) // 2], binary=True)
    with pytest.raises(kb.ModelFormatError, match="trailing"):
        kb.parse(data + b"\nextra\n", binary=True)
    with pytest.raises(kb.ModelFormatError, match="version 7"):
        kb.parse(data.replace(b"\n8\n", b"\n7\n", 1), binary=True)


# ---------------------------------------------------------------- synthetic v10-v17 models

ACTS = ["ACTIVATION_MISH", "ACTIVATION_SILU", "ACTIVATION_RELU", "ACTIVATION_IDENTITY"]
MULTS = [6.0, 21.0, 19.0, 18.0, 39.0, 0.3, 31.0]


class TinyWriter:
    """Emits a KataGo model file token by token with random weights, counting the parameters
    as KataGo does (everything but norm means and variances)."""

    def __init__(self, version, seed):
        self.v = version
        self.rng = np.random.default_rng(seed)
        self.items = []
        self.n_act = 0
        self.params = 0

    def tok(self, *toks):
        self.items.extend(str(t) for t in toks)

    def floats(self, n, scale=1.0, positive=False, counted=True):
        a = self.rng.uniform(0.5, 1.5, n) if positive else self.rng.normal(0, scale, n)
        self.items.append(a.astype(np.float32))
        self.params += n if counted else 0

    def conv(self, name, k, cin, cout):
        self.tok(name, k, k, cin, cout, 1, 1)
        self.floats(k * k * cin * cout, 1.0 / np.sqrt(k * k * cin))

    def norm(self, name, c):
        has_scale, has_bias = int(self.rng.random() < 0.7), int(self.rng.random() < 0.8)
        self.tok(name, c, "1e-05", has_scale, has_bias)
        self.floats(c, 0.2, counted=False)
        self.floats(c, positive=True, counted=False)
        if has_scale:
            self.floats(c, positive=True)
        if has_bias:
            self.floats(c, 0.2)

    def act(self, name):
        self.tok(name)
        if self.v >= 11:
            self.tok(ACTS[self.n_act % len(ACTS)])
            self.n_act += 1

    def matmul(self, name, cin, cout):
        self.tok(name, cin, cout)
        self.floats(cin * cout, 1.0 / np.sqrt(cin))

    def matbias(self, name, c):
        self.tok(name, c)
        self.floats(c, 0.2)

    def ordinary(self, name, c, mid):
        self.tok("ordinary_block", name)
        self.norm(name + "/n1", c), self.act(name + "/a1"), self.conv(name + "/w1", 3, c, mid)
        self.norm(name + "/n2", mid), self.act(name + "/a2"), self.conv(name + "/w2", 3, mid, c)

    def gpool(self, name, c, reg, gp):
        self.tok("gpool_block", name)
        self.norm(name + "/n1", c), self.act(name + "/a1")
        self.conv(name + "/w1a", 3, c, reg), self.conv(name + "/w1b", 3, c, gp)
        self.norm(name + "/n1b", gp), self.act(name + "/a1b")
        self.matmul(name + "/w1r", 3 * gp, reg)
        self.norm(name + "/n2", reg), self.act(name + "/a2"), self.conv(name + "/w2", 3, reg, c)

    def nested(self, name, c, mid, inner):
        """A nested bottleneck block; `inner` writes its blocks at width `mid`."""
        self.tok("nested_bottleneck_block", name, len(inner))
        self.norm(name + "/pre", c), self.act(name + "/prea"), self.conv(name + "/prec", 1, c, mid)
        for write in inner:
            write()
        self.norm(name + "/post", mid), self.act(name + "/posta")
        self.conv(name + "/postc", 1, mid, c)

    # transformer records (katago-transformer.md §2)
    def tnorm(self, name, c):
        self.tok(name, c, "1e-06")
        self.floats(c, positive=True)

    def rms_norm(self, name, c, spatial):
        self.tok(name, c, "1e-06", int(spatial), 0)
        self.floats(c, positive=True), self.floats(c, 0.2)

    def attention(self, name, c, heads, kv, qd, vd, rope):
        """rope: None, "learnable", or theta (fixed RoPE)."""
        self.tok("transformer_attention_block", name, heads, kv, qd, vd, int(rope is not None),
                 int(rope == "learnable"))
        self.tnorm(name + "/norm", c)
        self.matmul(name + "/q", c, heads * qd), self.matmul(name + "/k", c, kv * qd)
        self.matmul(name + "/v", c, kv * vd), self.matmul(name + "/out", heads * vd, c)
        if rope == "learnable":
            self.tok(name + "/freqs", kv, qd // 2, 2)
            self.floats(kv * qd, 1.0)
        elif rope is not None:
            self.tok(name + "/theta", rope)

    def ffn(self, name, c, f):
        self.tok("transformer_ffn_block", name, c, f, 1)
        self.tnorm(name + "/norm", c)
        self.matmul(name + "/l1", c, f), self.matmul(name + "/gate", c, f)
        self.matmul(name + "/l2", f, c)

    def default_blocks(self):
        return [lambda: self.ordinary("b1", 8, 6),
                lambda: self.nested("nb", 8, 4, [lambda: self.ordinary("nb/i1", 4, 4),
                                                 lambda: self.gpool("nb/i2", 4, 4, 3)]),
                lambda: self.gpool("b3", 8, 5, 3)]

    def model(self, policy_channels, blocks=None, tip=None):
        """A whole model of trunk width 8. `blocks` write the trunk's blocks (default: an
        ordinary, a nested bottleneck and a gpool block); `tip` is None for a norm at the trunk
        tip, "spatial" or "position" for an RMSNorm (v15+)."""
        v = self.v
        blocks = blocks or self.default_blocks()
        self.tok(f"tiny-v{v}", v, NUM_SPATIAL, NUM_GLOBAL)
        if v >= 13:
            self.tok(*MULTS)
        if v >= 15:
            self.tok(0, 1, 0, 0, 0, 0, 0, 0)
        self.tok("trunk", len(blocks), 8, 8, 8, 4, 4)
        if v >= 15:
            self.tok(int(tip is not None), 0, 0, 0, 0, 0)
        self.conv("conv1", 3, NUM_SPATIAL, 8), self.matmul("ginputw", NUM_GLOBAL, 8)
        for write in blocks:
            write()
        if tip is None:
            self.norm("trunk/norm", 8)
        else:
            self.rms_norm("trunk/norm", 8, tip == "spatial")
        self.act("trunk/act")
        self.tok("policyhead")
        if v >= 17:
            self.tok(policy_channels, 0, 0, 0)
        self.conv("p1", 1, 8, 4), self.conv("g1", 1, 8, 3), self.norm("g1/n", 3)
        self.act("g1/a"), self.matmul("g2", 9, 4), self.norm("p1/n", 4), self.act("p1/a")
        self.conv("p2", 1, 4, policy_channels)
        if v >= 15:
            self.matmul("pass", 9, 5), self.matbias("passb", 5), self.act("passa")
            self.matmul("pass2", 5, policy_channels)
        else:
            self.matmul("pass", 9, policy_channels)
        self.tok("valuehead")
        if v >= 17:
            self.tok(0, 0, 0)
        self.conv("v1", 1, 8, 3), self.norm("v1/n", 3), self.act("v1/a")
        self.matmul("v2", 9, 6), self.matbias("v2b", 6), self.act("v2/a")
        self.matmul("v3", 6, 3), self.matbias("v3b", 3)
        self.matmul("sv3", 6, 6), self.matbias("sv3b", 6)
        self.conv("vown", 1, 3, 1)
        return self

    def encode(self, binary):
        parts = []
        for item in self.items:
            if isinstance(item, str):
                parts.append(item.encode() + b"\n")
            elif binary:
                parts.append(b"@BIN@" + item.astype("<f4").tobytes() + b"\n")
            else:
                parts.append(b"".join(b"%.9g\n" % x for x in item))
        return b"".join(parts)


def policy_channels_for(version):
    return 4 if version in (16, 17) else 2 if version >= 12 else 1


WEIGHTS = ("w", "b", "mean", "var", "scale", "bias", "gamma", "beta", "weight", "freqs")


def write_and_load(writer, tmp_path, stem):
    """(model, path) of the writer's file as .bin.gz, checked equal to its .txt twin and
    to the writer's parameter count."""
    path = tmp_path / f"{stem}.bin.gz"
    path.write_bytes(gzip.compress(writer.encode(binary=True)))
    txt = tmp_path / f"{stem}.txt"
    txt.write_bytes(writer.encode(binary=False))
    model, model_txt = kb.load(path), kb.load(txt)
    assert our_listing(model) == our_listing(model_txt)
    for a, b in zip(kb.layers(model), kb.layers(model_txt)):
        for attr in WEIGHTS:
            if getattr(a, attr, None) is not None:
                np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    assert kb.param_count(model) == writer.params
    return model, path


def check_onnx_against_reference(model, path, tmp_path, seed):
    """The converted file's outputs equal the numpy reference's on full, rectangular and
    padded boards; returns the session."""
    session = ort.InferenceSession(str(kc.convert(path, tmp_path / "tiny.onnx")),
                                   providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(seed)
    for h, w in [(9, 9), (6, 11)]:
        spatial, glob = random_inputs(rng, 2, h, w)
        got = assert_matches_reference(model, session, spatial, glob)
        assert got["score"].shape == (2, 6)
    spatial, glob = random_inputs(rng, 2, 9, 9, board_h=7, board_w=5)
    assert_matches_reference(model, session, spatial, glob)
    return session


@pytest.mark.parametrize("version", [10, 11, 12, 13, 14, 15, 16, 17])
def test_synthetic_versions_convert_and_match_reference(version, tmp_path):
    pc = policy_channels_for(version)
    writer = TinyWriter(version, seed=version).model(pc)
    model, path = write_and_load(writer, tmp_path, f"tiny{version}")
    assert model.policy.channels == pc
    assert model.multipliers == (tuple(MULTS) if version >= 13 else kb.DEFAULT_MULTIPLIERS)
    kinds = {layer.kind for layer in kb.layers(model) if isinstance(layer, kb.Act)}
    assert kinds == (set(ACTS) if version >= 11 else {"ACTIVATION_RELU"})

    session = check_onnx_against_reference(model, path, tmp_path, version)
    meta = session.get_modelmeta().custom_metadata_map
    assert meta["model_version"] == str(version) and meta["policy_channels"] == str(pc)
    assert meta["score_outputs"].split(",")[-1] == "shortterm_score_error"
    assert meta["prefer_pass_alive_under_suicide"] == ("1" if version >= 15 else "0")


def test_unsupported_structures_are_refused():
    data = TinyWriter(15, 0).model(2).encode(binary=True)
    meta = data.replace(b"\n0\n1\n0\n0\n0\n0\n0\n0\ntrunk", b"\n1\n1\n0\n0\n0\n0\n0\n0\ntrunk", 1)
    with pytest.raises(kb.ModelFormatError, match="metadata"):
        kb.parse(meta, binary=True)
    odd = data.replace(b"ordinary_block", b"dilated_block", 1)
    with pytest.raises(kb.ModelFormatError, match="trunk block 0: unsupported block kind 'dil"):
        kb.parse(odd, binary=True)


# ---------------------------------------------------------------- synthetic transformer nets

def real_in_miniature(w):
    """The real file's structure at small widths: nested bottlenecks holding attention (MHA,
    learnable RoPE) and SwiGLU pairs, a spatial RMSNorm tip."""
    def nested(name):
        return lambda: w.nested(name, 8, 6, [
            lambda: w.attention(name + "/a0", 6, 2, 2, 4, 4, "learnable"),
            lambda: w.ffn(name + "/f1", 6, 10),
            lambda: w.attention(name + "/a2", 6, 2, 2, 4, 4, "learnable"),
            lambda: w.ffn(name + "/f3", 6, 10)])
    return [nested("nb0"), nested("nb1")], "spatial"


def gqa_fixed_rope(w):
    """Fewer KV heads than query heads, fixed RoPE, a per-position RMSNorm tip."""
    return [lambda: w.nested("nb", 8, 8, [lambda: w.attention("nb/a", 8, 4, 2, 8, 3, 100.0),
                                          lambda: w.ffn("nb/f", 8, 12)])], "position"


def top_level(w):
    """Transformer blocks in the trunk itself (whose off-board values are not zero) between
    conv blocks; GQA with learnable RoPE, so query head h must take KV head h div 2 and its
    frequencies; attention without RoPE."""
    return [lambda: w.attention("a0", 8, 4, 2, 4, 2, "learnable"),
            lambda: w.ffn("f0", 8, 16),
            lambda: w.ordinary("b1", 8, 6),
            lambda: w.attention("a1", 8, 2, 2, 6, 4, None),
            lambda: w.gpool("b2", 8, 5, 3),
            lambda: w.ffn("f1", 8, 8)], "spatial"


def odd_pairs_before_v15(w):
    """A version-12 net (no trunk norm kind yet, a norm tip) with transformer blocks; fixed
    RoPE with 3 pairs (qHeadDim % 4 = 2: one pair turns with the row, two with the column)."""
    return [lambda: w.attention("a", 8, 3, 1, 6, 2, 60.0), lambda: w.ffn("f", 8, 8),
            lambda: w.ordinary("b", 8, 4)], None


TRANSFORMER_NETS = {"real-in-miniature": (15, real_in_miniature),
                    "gqa-fixed-rope": (17, gqa_fixed_rope),
                    "top-level": (16, top_level),
                    "odd-pairs-v12": (12, odd_pairs_before_v15)}


def transformer_writer(name, seed=1):
    version, structure = TRANSFORMER_NETS[name]
    writer = TinyWriter(version, seed)
    blocks, tip = structure(writer)
    return writer.model(policy_channels_for(version), blocks, tip)


def attention_blocks(model):
    def walk(blocks):
        for b in blocks:
            yield from walk(b.blocks) if isinstance(b, kb.NestedBlock) else [b]
    return [b for b in walk(model.trunk.blocks) if isinstance(b, kb.AttentionBlock)]


@pytest.mark.parametrize("name", TRANSFORMER_NETS)
def test_synthetic_transformer_nets_convert_and_match_reference(name, tmp_path):
    model, path = write_and_load(transformer_writer(name), tmp_path, name)
    _, structure = TRANSFORMER_NETS[name]
    tip = structure(TinyWriter(15, 0))[1]
    assert isinstance(model.trunk.tip_norm, kb.Norm if tip is None else kb.RMSNorm)
    if tip is not None:
        assert model.trunk.tip_norm.spatial == (tip == "spatial")
    assert attention_blocks(model)
    check_onnx_against_reference(model, path, tmp_path, seed=len(name))


def test_transformer_blocks_run_in_onnxruntime_fused_ops():
    """The converted graph relies on onnxruntime's own operators (MultiHeadAttention,
    RotaryEmbedding, SkipSimplifiedLayerNormalization) of the release setup.cfg pins, whose
    CPU provider runs them (the reference tests above check their numbers); the trunk's two
    nested blocks of transformer blocks share one sequence view (a Transpose there and one
    back); every transformer matrix product named by its role."""
    model = kb.parse(transformer_writer("real-in-miniature").encode(binary=True), binary=True)
    graph = kc.build_onnx(model).graph
    ops = Counter(node.op_type for node in graph.node)
    attention = len(attention_blocks(model))
    assert ort.__version__.startswith("1.32.")
    assert ops["MultiHeadAttention"] == attention and ops["RotaryEmbedding"] == 2 * attention
    assert ops["SkipSimplifiedLayerNormalization"] >= attention
    assert ops["Softmax"] == 0 and ops["Transpose"] == 2
    roles = Counter(node.name.partition(":")[0] for node in graph.node if ":" in node.name)
    assert set(roles) == set(kc.ROLES) and roles["attention_out"] == attention


def test_synthetic_attention_headers_are_read():
    model = kb.parse(transformer_writer("top-level").encode(binary=True), binary=True)
    gqa, plain = attention_blocks(model)
    assert (gqa.num_heads, gqa.num_kv_heads, gqa.q_head_dim, gqa.v_head_dim) == (4, 2, 4, 2)
    assert isinstance(gqa.rope, kb.RopeFreqs) and gqa.rope.freqs.shape == (2, 2, 2)
    assert plain.rope is None and plain.q_head_dim == 6
    fixed = attention_blocks(kb.parse(transformer_writer("gqa-fixed-rope").encode(True), True))
    assert isinstance(fixed[0].rope, kb.RopeTheta) and fixed[0].rope.theta == 100.0


def test_fixed_rope_frequencies_follow_katago():
    """Pairs p < P/2 turn with the row at theta^(-2p/P), the rest with the column."""
    model = kb.parse(transformer_writer("gqa-fixed-rope").encode(True), True)
    table = kc.rope_frequencies(attention_blocks(model)[0])  # qHeadDim 8: P = 4 pairs
    expected = [[0, 1], [0, 100 ** -0.5], [1, 0], [100 ** -0.5, 0]]
    np.testing.assert_allclose(table[0], expected, rtol=1e-6)


def patched(writer, record, offset, value):
    """The writer's binary file with the token `offset` places after the record named
    `record` replaced by `value`."""
    items = list(writer.items)
    at = next(i for i, item in enumerate(items) if isinstance(item, str) and item == record)
    items[at + offset] = str(value)
    copy = TinyWriter(writer.v, 0)
    copy.items = items
    return copy.encode(binary=True)


def full_writer():
    """A v15 net with every transformer record: learnable and fixed RoPE, RMSNorm tip."""
    w = TinyWriter(15, 2)
    blocks = [lambda: w.nested("nb", 8, 6, [lambda: w.attention("nb/a0", 6, 2, 2, 4, 4,
                                                                "learnable"),
                                            lambda: w.ffn("nb/f1", 6, 10)]),
              lambda: w.attention("a", 8, 2, 1, 4, 4, 100.0), lambda: w.ffn("f", 8, 8)]
    return w.model(2, blocks, "spatial")


@pytest.mark.parametrize("record,offset,value,message", [
    ("nb/f1", 3, 0, "feed-forward blocks without SwiGLU"),
    ("trunk/norm", 4, 2, "grouped RMSNorm"),
    ("trunk", 7, 2, "trunk norm kind 2"),
    ("trunk", 8, 1, "unsupported option 1"),
    ("nb/prec", 5, 2, "dilated"),
    ("nb/a0", 2, 3, "2 heads are not a multiple of 3 KV heads"),
    ("nb/a0", 3, 5, "RoPE needs an even qHeadDim"),
    ("nb/a0", 1, 0, "size 0 is not positive"),
    ("nb/a0/freqs", 2, 3, r"RoPE frequencies are \(2, 3, 2\)"),
    ("a/theta", 1, "-1", "theta -1.0 is not positive"),
    ("a/theta", 1, "inf", "theta inf is not positive and finite"),
    ("nb/a0/norm", 2, "0", "epsilon 0.0"),
    ("trunk/norm", 2, "1.5", "epsilon 1.5"),
])
def test_what_katago_refuses_is_refused_naming_the_record(record, offset, value, message):
    data = patched(full_writer(), record, offset, value)
    with pytest.raises(kb.ModelFormatError, match=f"^{re.escape(record)}: .*{message}"):
        kb.parse(data, binary=True)


@pytest.mark.parametrize("record,offset,value,message", [
    ("nb/a0", 4, 3, "nb/a0: nb/a0/v is 6x8, expected 6 outputs"),
    ("nb/a0", 2, 1, "nb/a0: nb/a0/k is 6x8, expected 4 outputs"),
    ("nb/f1", 1, 7, "nb/f1: nb/f1/l1 is 6x10, expected 7x10"),
])
def test_projection_shapes_must_match_the_header(record, offset, value, message):
    with pytest.raises(kb.ModelFormatError, match=message):
        kb.parse(patched(full_writer(), record, offset, value), binary=True)


def test_transformer_block_width_must_match_its_stack():
    w = TinyWriter(15, 0)
    w.model(2, [lambda: w.nested("nb", 8, 6, [lambda: w.attention("nb/a", 5, 1, 1, 2, 2, None)]),
                lambda: w.ffn("f", 7, 4)])
    with pytest.raises(kb.ModelFormatError, match=r"nb/a: widths \[5\] in a stack of width 6"):
        kb.parse(w.encode(binary=True), binary=True)


def test_damaged_files_name_the_file_and_the_record(tmp_path):
    data = full_writer().encode(binary=True)
    cut = tmp_path / "cut.bin"
    cut.write_bytes(data[:data.index(b"nb/a0/q\n") + 30])
    with pytest.raises(kb.ModelFormatError,
                       match=f"^{cut}: nb/a0/q: the file ends inside a float block"):
        kb.load(cut)
    header = tmp_path / "header.bin"
    header.write_bytes(data[:data.index(b"nb/f1\n") + 9])
    with pytest.raises(kb.ModelFormatError, match=f"^{header}: nb/f1: the file ends here"):
        kb.load(header)
    gz = tmp_path / "short.bin.gz"
    gz.write_bytes(gzip.compress(data)[:-50])
    with pytest.raises(kb.ModelFormatError, match=f"^{gz}: damaged gzip data"):
        kb.load(gz)
    text = tmp_path / "bad.txt"
    text.write_bytes(full_writer().encode(binary=False).replace(b"\nnb/a0/q\n6\n8\n",
                                                                b"\nnb/a0/q\n6\nx\n", 1))
    with pytest.raises(kb.ModelFormatError,
                       match=f"^{text}: nb/a0/q: expected an integer, got 'x'"):
        kb.load(text)


# ---------------------------------------------------------------- the real transformer file

@pytest.fixture(scope="module")
def b10(b10_file):
    return kb.load(b10_file)


def test_b10_parses_whole_file_with_katago_param_count(b10_file, b10):
    data = gzip.decompress(b10_file.read_bytes())
    assert len(data) == 42_248_738
    assert b10.total_bytes == len(data)
    assert data[b10.consumed_bytes:].strip() == b""
    assert (b10.name, b10.version, b10.num_spatial, b10.num_global) == (
        "b10c384h6nbttflrs", 15, 22, 19)
    assert b10.multipliers == (20.0, 20.0, 20.0, 20.0, 40.0, 0.25, 150.0)
    assert b10.trunk.header == (10, 384, 192, 144, 48, 48)
    assert kb.param_count(b10) == 10_545_753
    assert b10.sha256 == B10_SHA


def b10_section_3_listing():
    """The layer list of katago-transformer.md §3, in our_listing's terms."""
    def conv(name, k, cin, cout):
        return ("conv", name, (str(k), str(k), str(cin), str(cout), "1", "1"))

    def matmul(name, cin, cout):
        return ("matmul", name, (str(cin), str(cout)))

    def norm(name, c, scale):
        return ("norm", name, (str(c), "1e-20", str(int(scale)), "1"))

    def act(name):
        return ("act", name, ("ACTIVATION_SILU",))

    rows = [conv("model.conv_spatial", 3, 22, 384), matmul("model.linear_global", 19, 384)]
    for i in range(10):
        b = f"model.blocks.{i}"
        rows += [norm(f"{b}.normactconvp.norm", 384, True), act(f"{b}.normactconvp.act"),
                 conv(f"{b}.normactconvp.conv", 1, 384, 192)]
        for j in range(4):
            s = f"{b}.blockstack.{j}"
            if j % 2 == 0:
                rows += [("tnorm", f"{s}.norm1", ("192", "1e-06"))]
                rows += [matmul(f"{s}.{p}_proj", 192, 192) for p in ("q", "k", "v", "out")]
                rows += [("rope", f"{s}.rope_freqs", ("6", "16", "2"))]
            else:
                rows += [("tnorm", f"{s}.norm", ("192", "1e-06")),
                         matmul(f"{s}.ffn_linear1", 192, 512),
                         matmul(f"{s}.ffn_linear_gate", 192, 512),
                         matmul(f"{s}.ffn_linear2", 512, 192)]
        rows += [norm(f"{b}.normactconvq.norm", 192, True), act(f"{b}.normactconvq.act"),
                 conv(f"{b}.normactconvq.conv", 1, 192, 384)]
    rows += [("rmsnorm", "model.norm_trunkfinal", ("384", "1e-06", "1")),
             act("model.act_trunkfinal")]
    p, v = "model.policy_head.", "model.value_head."
    rows += [conv(p + "conv1p", 1, 384, 48), conv(p + "conv1g", 1, 384, 48),
             norm(p + "biasg", 48, False), act(p + "actg"), matmul(p + "linear_g", 144, 48),
             norm(p + "bias2", 48, False), act(p + "act2"), conv(p + "conv2p", 1, 48, 2),
             matmul(p + "linear_pass", 144, 48), ("matbias", p + "linear_pass_bias", ("48",)),
             act(p + "act_pass"), matmul(p + "linear_pass2", 48, 2)]
    rows += [conv(v + "conv1", 1, 384, 96), norm(v + "bias1", 96, False), act(v + "act1"),
             matmul(v + "linear2", 288, 96), ("matbias", v + "bias2", ("96",)), act(v + "act2"),
             matmul(v + "linear_valuehead", 96, 3), ("matbias", v + "bias_valuehead", ("3",)),
             matmul(v + "linear_miscvaluehead", 96, 6),
             ("matbias", v + "bias_miscvaluehead", ("6",)), conv(v + "conv_ownership", 1, 96, 1)]
    return rows


def test_b10_layers_match_section_3(b10):
    assert our_listing(b10) == b10_section_3_listing()
    for block in attention_blocks(b10):
        assert (block.num_heads, block.num_kv_heads, block.q_head_dim, block.v_head_dim) == (
            6, 6, 32, 32)
    freqs = np.concatenate([b.rope.freqs.ravel() for b in attention_blocks(b10)])
    assert len(freqs) == 20 * 192 and -3.5 < freqs.min() < -3.3 and 4.4 < freqs.max() < 4.5


def test_b10_onnx_matches_numpy_reference_on_a_padded_board(b10, b10_onnx):
    session = ort.InferenceSession(str(b10_onnx), providers=["CPUExecutionProvider"])
    spatial, glob = random_inputs(np.random.default_rng(10), 1, 9, 9, board_h=7, board_w=8)
    assert_matches_reference(b10, session, spatial, glob, atol=1e-4)
