"""Deepening a trained net: the grown net computes what the trained one did, and its
checkpoint resumes training where the source stood."""

import numpy as np
import pytest
import torch

from dosaku.training.checkpoint import load_checkpoint
from dosaku.training.chunks import write_chunk
from dosaku.training.grow import deepen, main
from dosaku.training.model import GPoolBlock, ResBlock
from dosaku.training.train import TrainConfig, train
from tests.test_katago_convert import random_inputs
from tests.test_training_model import perturbed, run
from tests.training_rows import random_game_rows


def test_a_deepened_net_computes_the_same_outputs():
    net = perturbed("b2c32", seed=5)
    grown = deepen(net, "b5c32").eval()
    assert [type(b) for b in grown.blocks] == [ResBlock, GPoolBlock, ResBlock, ResBlock,
                                               GPoolBlock]
    for size in (5, 9):
        spatial, glob = random_inputs(np.random.default_rng(size), 3, size, size)
        want, got = run(net, spatial, glob), run(grown, spatial, glob)
        for name in want:
            np.testing.assert_allclose(got[name], want[name], rtol=1e-5, atol=1e-5)
    # The added blocks are trainable, not frozen copies of the identity.
    assert all(p.requires_grad for p in grown.blocks[4].parameters())


@pytest.mark.parametrize("name", ["b2c48", "b2c32", "b1c32"])
def test_deepen_refuses_other_widths_and_shallower_nets(name):
    with pytest.raises(ValueError):
        deepen(perturbed("b2c32"), name)


def test_a_grown_checkpoint_resumes_training(tmp_path):
    data = tmp_path / "chunks"
    write_chunk(data, "games-1.npz", random_game_rows(5, 6, seed=2, teacher=True), "test")
    base = dict(batch=16, lr=0.02, warmup=2, threads=1, seed=1, progress=False)
    source = train(TrainConfig([str(data)], str(tmp_path / "small"), net="b2c32", steps=4,
                               checkpoint_every=4, **base), log=lambda _: None)
    assert main([str(tmp_path / "small"), "--net", "b4c32", str(tmp_path / "deep")]) == 0
    grown = load_checkpoint(tmp_path / "deep" / "checkpoints" / "step-000000004.pt")
    assert grown["net"] == "b4c32" and grown["step"] == 4
    small = load_checkpoint(source.checkpoint)
    assert torch.equal(grown["model"]["blocks.1.conv_final.weight"],
                       small["model"]["blocks.1.conv_final.weight"])
    assert not grown["model"]["blocks.3.conv2.weight"].any()
    result = train(TrainConfig([str(data)], str(tmp_path / "deep"), net="b4c32", steps=6,
                               checkpoint_every=2, resume=True, **base), log=lambda _: None)
    assert result.step == 6 and np.isfinite(result.losses["total"])
    assert load_checkpoint(result.checkpoint)["model"]["blocks.3.conv2.weight"].any()
    # A second grow into the same run folder is refused rather than mixed in.
    assert main([str(tmp_path / "small"), "--net", "b4c32", str(tmp_path / "deep")]) == 1
