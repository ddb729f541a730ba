"""KataGo model parsing and .bin -> ONNX conversion, checked against an independent numpy pass.

The real b6c96 net (version 8) comes from ../shared; versions 10-17 are checked with tiny
synthetic models written by this test in KataGo's file format (binary and text floats).
"""

import gzip
import re

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from engine.features import NUM_GLOBAL, NUM_SPATIAL
from tests.katago_reference import forward as reference_forward
from networks import katago_bin as kb
from networks import katago_convert as kc

B6_SHA = "f5d32604e3675c480c7c8f6aa579a1ea857135628a0afccc8fa56330fbacd38d"


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
        if isinstance(layer, kb.Conv):
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
    norms = [l for l in kb.layers(b6) if isinstance(l, kb.Norm)]
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
    """Emits a KataGo model file token by token with random weights."""

    def __init__(self, version, seed):
        self.v = version
        self.rng = np.random.default_rng(seed)
        self.items = []
        self.n_act = 0

    def tok(self, *toks):
        self.items.extend(str(t) for t in toks)

    def floats(self, n, scale=1.0, positive=False):
        a = self.rng.uniform(0.5, 1.5, n) if positive else self.rng.normal(0, scale, n)
        self.items.append(a.astype(np.float32))

    def conv(self, name, k, cin, cout):
        self.tok(name, k, k, cin, cout, 1, 1)
        self.floats(k * k * cin * cout, 1.0 / np.sqrt(k * k * cin))

    def norm(self, name, c):
        has_scale, has_bias = int(self.rng.random() < 0.7), int(self.rng.random() < 0.8)
        self.tok(name, c, "1e-05", has_scale, has_bias)
        self.floats(c, 0.2)
        self.floats(c, positive=True)
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

    def model(self, policy_channels):
        v = self.v
        self.tok(f"tiny-v{v}", v, NUM_SPATIAL, NUM_GLOBAL)
        if v >= 13:
            self.tok(*MULTS)
        if v >= 15:
            self.tok(0, 1, 0, 0, 0, 0, 0, 0)
        self.tok("trunk", 3, 8, 8, 8, 4, 4)
        if v >= 15:
            self.tok(0, 0, 0, 0, 0, 0)
        self.conv("conv1", 3, NUM_SPATIAL, 8), self.matmul("ginputw", NUM_GLOBAL, 8)
        self.ordinary("b1", 8, 6)
        self.tok("nested_bottleneck_block", "nb", 2)
        self.norm("nb/pre", 8), self.act("nb/prea"), self.conv("nb/prec", 1, 8, 4)
        self.ordinary("nb/i1", 4, 4)
        self.gpool("nb/i2", 4, 4, 3)
        self.norm("nb/post", 4), self.act("nb/posta"), self.conv("nb/postc", 1, 4, 8)
        self.gpool("b3", 8, 5, 3)
        self.norm("trunk/norm", 8), self.act("trunk/act")
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


@pytest.mark.parametrize("version", [10, 11, 12, 13, 14, 15, 16, 17])
def test_synthetic_versions_convert_and_match_reference(version, tmp_path):
    pc = policy_channels_for(version)
    writer = TinyWriter(version, seed=version).model(pc)
    path = tmp_path / f"tiny{version}.bin.gz"
    path.write_bytes(gzip.compress(writer.encode(binary=True)))
    txt = tmp_path / f"tiny{version}.txt"
    txt.write_bytes(writer.encode(binary=False))
    model, model_txt = kb.load(path), kb.load(txt)
    assert our_listing(model) == our_listing(model_txt)
    for a, b in zip(kb.layers(model), kb.layers(model_txt)):
        for attr in ("w", "b", "mean", "var", "scale", "bias"):
            if getattr(a, attr, None) is not None:
                np.testing.assert_array_equal(getattr(a, attr), getattr(b, attr))
    assert model.policy.channels == pc
    assert model.multipliers == (tuple(MULTS) if version >= 13 else kb.DEFAULT_MULTIPLIERS)
    kinds = {l.kind for l in kb.layers(model) if isinstance(l, kb.Act)}
    assert kinds == (set(ACTS) if version >= 11 else {"ACTIVATION_RELU"})

    out = kc.convert(path, tmp_path / "tiny.onnx")
    session = ort.InferenceSession(str(out), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    assert meta["model_version"] == str(version) and meta["policy_channels"] == str(pc)
    assert meta["score_outputs"].split(",")[-1] == "shortterm_score_error"
    assert meta["prefer_pass_alive_under_suicide"] == ("1" if version >= 15 else "0")
    rng = np.random.default_rng(version)
    for h, w in [(9, 9), (6, 11)]:
        spatial, glob = random_inputs(rng, 2, h, w)
        got = assert_matches_reference(model, session, spatial, glob)
        assert got["score"].shape == (2, 6)
    spatial, glob = random_inputs(rng, 2, 9, 9, board_h=7, board_w=5)
    assert_matches_reference(model, session, spatial, glob)


def test_unsupported_structures_are_refused():
    data = TinyWriter(15, 0).model(2).encode(binary=True)
    rms = data.replace(b"trunk\n3\n8\n8\n8\n4\n4\n0\n", b"trunk\n3\n8\n8\n8\n4\n4\n1\n", 1)
    with pytest.raises(kb.ModelFormatError, match="RMSNorm"):
        kb.parse(rms, binary=True)
    meta = data.replace(b"\n0\n1\n0\n0\n0\n0\n0\n0\ntrunk", b"\n1\n1\n0\n0\n0\n0\n0\n0\ntrunk", 1)
    with pytest.raises(kb.ModelFormatError, match="metadata"):
        kb.parse(meta, binary=True)
    odd = data.replace(b"ordinary_block", b"transformer_ffn_block", 1)
    with pytest.raises(kb.ModelFormatError, match="transformer_ffn_block"):
        kb.parse(odd, binary=True)
