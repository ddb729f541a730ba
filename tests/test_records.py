"""tournament.records: a match folder packed into one file and back, the same games, resumable.

Real matches between scripted engines are packed, unpacked into a fresh folder (the SGFs must
come back byte for byte, match.json's games unchanged) and resumed there; a committed record
goes round the other way; records/README.md must index exactly the records in records/.
"""

import json
import shutil
from pathlib import Path

import pytest

from dosaku.engine.rules.constants import BLACK, PASS_POINT, WHITE
from dosaku.engine.rules.coords import parse_vertex
from dosaku.tournament import match, records, soak
from dosaku.tournament.records import RecordError, decode_moves, encode_moves

ROOT = Path(__file__).resolve().parents[1]
RECORDS = ROOT / "records"
SMALL_RECORD = RECORDS / "soak-b6c96-19x19-byoyomi-60s-3x5s.jsonl.gz"  # 4 games of 19x19
# on the first line, where no random opening move goes: the games end by passes and are scored
ENGINE1_PLAYS = "A1,B1,C1,D1,E1"
ENGINE2_PLAYS = "G7,F7,E7,D7"


def match_args(fake_engine, out, games, *extra):
    return [fake_engine("script", ENGINE1_PLAYS), fake_engine("script", ENGINE2_PLAYS),
            "--games", str(games), "--size", "7", "--komi", "0.5", "--openings", "2",
            "--max-moves", "30", "--no-progress", "--out", str(out), *extra]


def folder(out: Path) -> tuple[dict, dict]:
    """(match.json, {SGF name: bytes}) of a match folder."""
    return (json.loads((out / "match.json").read_text()),
            {p.name: p.read_bytes() for p in sorted(out.glob("*.sgf"))})


@pytest.mark.parametrize("size", [9, 19, 25])
def test_moves_as_one_string(size):
    moves = [(BLACK, parse_vertex("A1", size, size)), (WHITE, PASS_POINT),
             (BLACK, parse_vertex(f"{'ABCDEFGHJKLMNOPQRSTUVWXYZ'[size - 1]}{size}", size, size)),
             (WHITE, PASS_POINT)]
    text = encode_moves(moves, size)
    assert text == f"a{chr(96 + size)}..{chr(96 + size)}a.."
    assert decode_moves(text, size) == moves
    with pytest.raises(RecordError, match="move 2"):
        encode_moves([(BLACK, 0), (BLACK, 1)], size)


def test_pack_unpack_and_resume(fake_engine, tmp_path):
    played = tmp_path / "played"
    assert match.main(match_args(fake_engine, played, 4)) == 0
    path = tmp_path / "run.jsonl.gz"
    assert records.main(["pack", str(played), str(tmp_path / "run.json")]) == 2  # no such kind
    assert records.main(["pack", str(played), str(path), "--about", "scripted", "--cpu",
                         "any"]) == 0
    record = records.read(path)
    data, sgfs = folder(played)
    assert (record.header["record"], record.header["about"]) == ("run", "scripted")
    assert (record.header["config"], record.header["summary"]) == (data["config"],
                                                                    data["summary"])
    assert [g["game"] for g in record.games] == [0, 1, 2, 3]
    assert {g["reason"] for g in record.games} == {"passes"}
    assert all(len(g["moves"]) == 2 * e["moves"] for g, e in zip(record.games, data["games"]))

    again = tmp_path / "again.jsonl.gz"
    records.write(again, records.pack(str(played), "run", "scripted",
                                      record.header["commit"], "any"))
    assert again.read_bytes() == path.read_bytes()  # the same match packs to the same bytes

    back = tmp_path / "back"
    assert records.main(["unpack", str(path), str(back)]) == 0
    assert folder(back) == (data, sgfs)

    # a rerun with more games plays only the new ones
    assert match.main(match_args(fake_engine, back, 6)) == 0
    resumed, resumed_sgfs = folder(back)
    assert resumed["games"][:4] == data["games"] and len(resumed["games"]) == 6
    assert {k: resumed_sgfs[k] for k in sgfs} == sgfs


def test_pack_refuses_an_sgf_that_disagrees(fake_engine, tmp_path, capsys):
    played = tmp_path / "played"
    assert match.main(match_args(fake_engine, played, 2)) == 0
    data = json.loads((played / "match.json").read_text())
    data["games"][1]["moves"] += 1
    (played / "match.json").write_text(json.dumps(data))
    assert records.main(["pack", str(played), str(tmp_path / "x.jsonl")]) == 2
    assert "game-0002.sgf" in capsys.readouterr().err


def soak_args(fake_engine, out, games):
    return [fake_engine("slow", "0.1"), fake_engine("pass"), "--games", str(games), "--size",
            "5", "--komi", "0.5", "--max-moves", "8", "--rss-interval", "0.05",
            "--no-progress", "--out", str(out)]


def test_a_soak_keeps_its_summary_and_memory(fake_engine, tmp_path):
    played = tmp_path / "soak"
    assert soak.main(soak_args(fake_engine, played, 2)) == 0
    path = tmp_path / "soak.jsonl"
    assert records.main(["pack", str(played), str(path)]) == 0
    kept = records.read(path).header["soak"]
    sampled = json.loads((played / "soak.json").read_text())
    assert kept["summary"] == sampled["summary"]
    pids = {s["pid"] for s in sampled["samples"]}
    assert {p["pid"] for p in kept["memory"]} == pids and pids
    for proc in kept["memory"]:
        mine = [s for s in sampled["samples"] if s["pid"] == proc["pid"]]
        assert max(mb for _, mb in proc["rss_mb"]) == max(s["rss_mb"] for s in mine)

    back = tmp_path / "back"
    assert records.main(["unpack", str(path), str(back)]) == 0
    assert json.loads((back / "soak.json").read_text())["summary"] == sampled["summary"]
    assert soak.main(soak_args(fake_engine, back, 3)) == 0
    assert len(json.loads((back / "match.json").read_text())["games"]) == 3


def test_a_committed_record_unpacks_and_packs_to_itself(tmp_path, capsys):
    record = records.read(SMALL_RECORD)
    records.unpack(SMALL_RECORD, str(tmp_path / "m"))
    h = record.header
    again = records.pack(str(tmp_path / "m"), h["record"], h["about"], h["commit"], h["cpu"])
    assert again.games == record.games
    assert {**again.header, "soak": h["soak"]} == h  # unpacked, a soak has no samples left
    assert records.main(["sgf", str(SMALL_RECORD), "4"]) == 0
    assert capsys.readouterr().out.encode() == (tmp_path / "m" / "game-0004.sgf").read_bytes() \
        + b"\n"
    assert records.main(["sgf", str(SMALL_RECORD), "5"]) == 2


def test_the_index_lists_every_record(tmp_path):
    readme = (RECORDS / "README.md").read_text()
    assert readme.endswith(records.index_table(RECORDS))
    copy = tmp_path / "records"
    copy.mkdir()
    shutil.copy(SMALL_RECORD, copy)
    (copy / "README.md").write_text("# Records\n\nSome words.\n")
    assert records.main(["index", str(copy)]) == 0
    text = (copy / "README.md").read_text()
    assert text.startswith("# Records\n\nSome words.\n\n| record |")
    assert text.count("\n| [") == 1 and SMALL_RECORD.name in text
    assert records.main(["index", str(copy)]) == 0
    assert (copy / "README.md").read_text() == text
