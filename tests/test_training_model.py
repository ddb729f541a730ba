"""The PyTorch net and its ONNX export: KataGo's forward pass (checked against the spec's plain
numpy reference), masking for padded boards, and export round trips through the engine."""

import json

import numpy as np
import pytest
import torch

from dosaku.engine.evaluators.onnx_evaluator import OnnxModel
from dosaku.networks import katago_convert as kc
from dosaku.training.export import (
    ExportMismatch,
    check_export,
    export_net,
    export_random,
    to_katago,
)
from dosaku.training.model import GPoolBlock, ResBlock, build_net, net_config
from tests.katago_reference import forward as reference_forward
from tests.test_katago_convert import random_inputs

OUTPUTS = ("policy", "value", "score", "ownership")


def perturbed(name: str, seed: int = 0):
    """A net whose every parameter is random (no zero-initialised branch, no identity norm)."""
    net = build_net(name, seed)
    gen = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.2 * torch.randn(p.shape, generator=gen))
    return net.eval()


def run(net, spatial, glob):
    with torch.no_grad():
        out = net(torch.from_numpy(spatial), torch.from_numpy(glob))
    return dict(zip(OUTPUTS, (o.numpy() for o in out)))


def test_net_names_give_blocks_and_channels():
    cfg = net_config("b6c96")
    assert (cfg.blocks, cfg.channels) == (6, 96)
    net = build_net("b6c96")
    kinds = [type(b) for b in net.blocks]
    assert kinds == [ResBlock, GPoolBlock, ResBlock, ResBlock, GPoolBlock, ResBlock]
    assert net.initial_conv.out_channels == 96
    for bad in ("b6", "c96b6", "b0c32", "b2c8"):
        with pytest.raises(ValueError, match="bXcY"):
            net_config(bad)


def test_forward_equals_the_spec_reference_on_padded_boards():
    net = perturbed("b2c32")
    rng = np.random.default_rng(3)
    spatial, glob = random_inputs(rng, 3, 7, 7, board_h=5, board_w=6)
    got = run(net, spatial, glob)
    ref = reference_forward(to_katago(net, "t"), spatial, glob)
    mask = spatial[:, 0].reshape(3, -1) > 0
    on_board = np.append(mask, np.ones((3, 1), bool), axis=1)
    np.testing.assert_allclose(got["policy"][on_board], ref["policy"][:, 0][on_board],
                               rtol=1e-4, atol=1e-4)
    assert np.all(got["policy"][~on_board] < -4000.0)
    for key in ("value", "score"):
        np.testing.assert_allclose(got[key], ref[key], rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["ownership"], ref["ownership"], rtol=1e-4, atol=1e-4)
    assert np.all(got["ownership"].reshape(3, -1)[~mask] == 0.0)


def test_board_padded_into_a_larger_buffer_gives_the_same_outputs():
    net = perturbed("b2c32", seed=4)
    rng = np.random.default_rng(5)
    exact, glob = random_inputs(rng, 2, 5, 5)
    padded = np.zeros((2, exact.shape[1], 9, 9), np.float32)
    padded[:, :, :5, :5] = exact
    a, b = run(net, exact, glob), run(net, padded, glob)
    board = b["policy"][:, :-1].reshape(2, 9, 9)[:, :5, :5].reshape(2, -1)
    np.testing.assert_allclose(board, a["policy"][:, :-1], rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(b["policy"][:, -1], a["policy"][:, -1], rtol=1e-5, atol=1e-4)
    for key in ("value", "score"):
        np.testing.assert_allclose(b[key], a[key], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b["ownership"][:, :5, :5], a["ownership"], rtol=1e-5, atol=1e-5)


def test_fresh_net_is_near_uniform_and_its_blocks_start_as_identity():
    net = build_net("b4c64", seed=0).eval()
    spatial, glob = random_inputs(np.random.default_rng(0), 2, 9, 9)
    out = run(net, spatial, glob)
    probs = torch.softmax(torch.from_numpy(out["policy"]), dim=1).numpy()
    assert probs.max() < 5.0 / 82
    for block in net.blocks:
        assert torch.count_nonzero(block.residual_out().weight) == 0


def test_export_round_trip_through_the_engine(tmp_path):
    net = perturbed("b2c32", seed=7)
    path = export_net(net, tmp_path / "net.onnx", training_steps=123, checkpoint_sha="ab" * 32,
                      check_sizes=(5, 9))
    model = OnnxModel(path)
    rng = np.random.default_rng(8)
    for size in (5, 9):
        spatial, glob = random_inputs(rng, 4, size, size)
        got, want = model.run(spatial, glob), run(net, spatial, glob)
        for key in OUTPUTS:
            np.testing.assert_allclose(got[key], want[key], rtol=1e-4, atol=1e-4, err_msg=key)
    meta = model.meta
    assert meta["feature_set"] == "katago-v7" and meta["producer"] == "dosaku"
    assert meta["net"] == "b2c32" and meta["training_steps"] == "123"
    assert meta["checkpoint_sha256"] == "ab" * 32 and "ab" * 32 in meta["source"]
    assert model.score_outputs == ("scoremean", "scorestdev", "lead")
    assert json.loads(meta["multipliers"])["lead"] == 20.0
    assert model.session.get_inputs()[0].shape[2:] == ["H", "W"]


def test_export_carries_every_metadata_key_of_a_converted_katago_net(tmp_path):
    net = build_net("b2c32", 0)
    path = export_random("b2c32", tmp_path / "gen0.onnx", seed=0, check_sizes=(5,))
    converted_keys = set(kc.metadata(to_katago(net, "x")))
    meta = OnnxModel(path).meta
    assert converted_keys <= set(meta)
    assert meta["init_seed"] == "0" and meta["training_steps"] == "0"


def test_export_check_refuses_a_file_that_differs_from_the_net(tmp_path):
    path = export_random("b2c32", tmp_path / "a.onnx", seed=0, check_sizes=(5,))
    other = perturbed("b2c32", seed=1)
    with pytest.raises(ExportMismatch, match="differs from PyTorch"):
        check_export(other, path, sizes=(5,))


def test_policy_temperature_divides_the_exported_policy_logits_and_nothing_else(tmp_path):
    net = perturbed("b2c32", seed=9)
    plain = OnnxModel(export_net(net, tmp_path / "t1.onnx", 5, check_sizes=(5,)))
    sharp = OnnxModel(export_net(net, tmp_path / "t05.onnx", 5, check_sizes=(5,),
                                 policy_temperature=0.5))
    spatial, glob = random_inputs(np.random.default_rng(10), 4, 7, 7)
    spatial[:, 0] = 1.0  # every point on the board: every logit is the layers' own
    a, b = plain.run(spatial, glob), sharp.run(spatial, glob)
    np.testing.assert_allclose(b["policy"], 2.0 * a["policy"], rtol=1e-4, atol=1e-4)
    for key in ("value", "score", "ownership"):
        np.testing.assert_allclose(b[key], a[key], rtol=1e-5, atol=1e-5, err_msg=key)
    assert sharp.meta["policy_temperature"] == "0.5" and "policy_temperature" not in plain.meta
    with pytest.raises(ValueError, match="must be positive"):
        export_net(net, tmp_path / "t0.onnx", 5, check_sizes=(5,), policy_temperature=0.0)
