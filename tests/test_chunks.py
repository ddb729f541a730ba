"""Chunk files: bad chunks are refused with a clear error and skipped by load_chunks.

Each case writes one good chunk beside one spoiled in a single way (after writing, so the
writer's own checks cannot catch it), then checks that read_chunk names the fault and that
load_chunks reports it, skips it and still returns the good chunk.
"""

import hashlib
import json
import zipfile

import numpy as np
import pytest

from dosaku.training.chunks import (
    MANIFEST,
    TEACHER_KEYS,
    ChunkError,
    Rows,
    load_chunks,
    read_chunk,
    read_manifest,
    write_chunk,
)

SIZE = 3
AREA = SIZE * SIZE
PLANES = 4


def make_rows(n: int = 5, teacher: bool = True, seed: int = 0) -> Rows:
    rng = np.random.default_rng(seed)
    planes = rng.integers(0, 2, (n, PLANES * AREA)).astype(np.uint8)
    policy = rng.random((n, AREA + 1)).astype(np.float32)
    policy /= policy.sum(axis=1, keepdims=True)
    value = np.tile(np.array([1, 0, 0], np.float32), (n, 1))
    rows = Rows(SIZE, SIZE, PLANES, "test", np.packbits(planes, axis=1),
                rng.random((n, 2)).astype(np.float32), policy, np.ones(n, np.float32), value,
                rng.normal(size=n).astype(np.float32),
                rng.uniform(-1, 1, (n, AREA)).astype(np.float32))
    if teacher:
        rows.teacher = {"teacher_policy": policy.copy(), "teacher_value": value.copy(),
                        "teacher_score": rows.score.copy(),
                        "teacher_ownership": rows.ownership.copy()}
    return rows


def rewrite_npz(path, change):
    """Replace the arrays of a written chunk by change(dict of arrays) (keeps the manifest)."""
    with np.load(path) as z:
        data = {k: z[k] for k in z.files}
    change(data)
    with open(path, "wb") as f:
        np.savez_compressed(f, **data)


def truncate(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def flip_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def nan_score(path):
    rewrite_npz(path, lambda d: d["score"].__setitem__(0, np.nan))


def wrong_shape(path):
    rewrite_npz(path, lambda d: d.__setitem__("ownership", d["ownership"][:, :-1]))


def policy_not_normalised(path):
    rewrite_npz(path, lambda d: d["policy"].__setitem__(1, d["policy"][1] * 2))


def missing_teacher_key(path):
    rewrite_npz(path, lambda d: d.pop("teacher_score"))


CASES = {  # spoiler, whether it changes bytes the manifest hashed, words of the error
    "truncated": (truncate, True, "sha256"),
    "altered bytes": (flip_byte, True, "sha256"),
    "NaN target": (nan_score, False, "NaN"),
    "wrong shape": (wrong_shape, False, "shape"),
    "policy not summing to 1": (policy_not_normalised, False, "probability"),
    "missing teacher key": (missing_teacher_key, False, "teacher targets incomplete"),
}


def test_good_chunk_round_trips(tmp_path):
    rows = make_rows()
    entry = write_chunk(tmp_path, "a.npz", rows, "test", games=1)
    back = read_chunk(tmp_path / "a.npz", entry["sha256"])
    np.testing.assert_array_equal(back.spatial_bits, rows.spatial_bits)
    np.testing.assert_array_equal(back.teacher["teacher_ownership"],
                                  rows.teacher["teacher_ownership"])
    assert set(back.teacher) == set(TEACHER_KEYS)
    assert read_manifest(tmp_path)["chunks"] == [entry]


@pytest.mark.parametrize("case", CASES)
def test_spoiled_chunk_is_refused_and_skipped(tmp_path, case):
    spoil, hashed, words = CASES[case]
    good = make_rows(seed=1)
    write_chunk(tmp_path, "good.npz", good, "test")
    write_chunk(tmp_path, "bad.npz", make_rows(seed=2), "test")
    spoil(tmp_path / "bad.npz")
    if not hashed:
        # Bad content with a matching hash (as a faulty writer would leave): the content
        # checks must refuse it on their own.
        manifest = read_manifest(tmp_path)
        for c in manifest["chunks"]:
            c["sha256"] = hashlib.sha256((tmp_path / c["file"]).read_bytes()).hexdigest()
        (tmp_path / MANIFEST).write_text(json.dumps(manifest))
    sha = {c["file"]: c["sha256"] for c in read_manifest(tmp_path)["chunks"]}["bad.npz"]
    with pytest.raises(ChunkError, match=words):
        read_chunk(tmp_path / "bad.npz", sha)
    reports = []
    loaded = load_chunks(tmp_path, log=reports.append)
    assert len(loaded) == 1
    np.testing.assert_array_equal(loaded[0].policy, good.policy)
    assert len(reports) == 1 and "bad.npz" in reports[0] and words in reports[0]


def test_truncated_chunk_without_a_manifest_hash_is_unreadable(tmp_path):
    write_chunk(tmp_path, "bad.npz", make_rows(), "test")
    truncate(tmp_path / "bad.npz")
    with pytest.raises(ChunkError, match="unreadable"):
        read_chunk(tmp_path / "bad.npz")


def test_writer_refuses_rows_it_could_not_read_back(tmp_path):
    rows = make_rows()
    rows.policy[0, 0] = np.nan
    with pytest.raises(ChunkError):
        write_chunk(tmp_path, "x.npz", rows, "test")
    assert not (tmp_path / "x.npz").exists() and read_manifest(tmp_path)["chunks"] == []


def test_zip_of_another_kind_is_refused(tmp_path):
    path = tmp_path / "other.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("readme.txt", "not a chunk")
    with pytest.raises(ChunkError):
        read_chunk(path)
