"""tournament.review: positions analysed, the reviewed SGF, the mistakes, the plot, resuming."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from sgfmill import sgf

from dosaku.engine.config import EngineConfig
from dosaku.engine.engine import Engine
from dosaku.engine.evaluators.evaluator import Capabilities, Evaluation
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import BLACK, MOVE_OK, WHITE
from dosaku.engine.rules.coords import point_from_sgfmill
from dosaku.engine.rules.game import GameState
from dosaku.engine.rules.rulesets import PRESETS
from dosaku.tournament import review
from dosaku.tournament.review import Cache, load_game, mistakes, review_positions

ROOT = Path(__file__).resolve().parents[1]
# game 1 of records/b6c96-100visits-vs-gnugo10-9x9.jsonl.gz: Dosaku against GNU Go on 9x9
GAME = ROOT / "tests" / "data" / "gnugo-game-9x9.sgf"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# 9x9, Black E5 is captured by move 10 (W F5 fills its last liberty), two passes at the end
SHORT = (b"(;GM[1]FF[4]SZ[9]KM[7]RU[Chinese]PB[b]PW[w];B[ee];W[de];B[ce];W[ed];B[cd];W[ef];"
         b"B[cf];W[dd];B[gg];W[fe];B[];W[])")
TEMPO = 0.5  # the fake evaluator's bonus for having the move


class TempoEvaluator:
    """value = tanh(0.3 * (own stones - opponent stones) + TEMPO) for the side to move: every
    move costs its mover a little, a pass more, a capture less. Uniform policy."""
    capabilities = Capabilities(needs_history=False)

    def evaluate(self, batch):
        n = batch.count
        colors = batch.boards[:n, B.ROW_COLOR]
        black = (colors == BLACK).sum(axis=1)
        white = (colors == WHITE).sum(axis=1)
        own = np.where(batch.to_move[:n] == BLACK, black - white, white - black)
        legal = batch.legal[:n].astype(np.float32)
        return Evaluation(legal / legal.sum(axis=1, keepdims=True),
                          np.tanh(0.3 * own + TEMPO).astype(np.float32),
                          own.astype(np.float32), None)


def tempo_black_winrate(game: GameState, to_move: int) -> float:
    """The fake evaluator's Black winrate, from the stones counted here."""
    black = sum(1 for p in range(game.board.shape[1]) if game.board[B.ROW_COLOR, p] == BLACK)
    white = sum(1 for p in range(game.board.shape[1]) if game.board[B.ROW_COLOR, p] == WHITE)
    own = black - white if to_move == BLACK else white - black
    value = math.tanh(0.3 * own + TEMPO)
    return (1 + (value if to_move == BLACK else -value)) / 2


def run_main(tmp_path, *extra, game=GAME):
    out = tmp_path / "reviewed.sgf"
    code = review.main([str(game), "--out", str(out), "--no-progress", *extra])
    return code, out


def test_mistakes_are_the_winrate_drops_of_a_known_evaluation(tmp_path):
    game = load_game(SHORT)
    assert game.rules == "chinese" and game.komi == 7 and len(game.moves) == 12
    cache = Cache(str(tmp_path / "c.json"), {"k": 1})

    def engine():
        return Engine(9, 9, 7, PRESETS["chinese"], evaluator=TempoEvaluator(),
                      config=EngineConfig(visits=1, seconds=0, report_reuse=False))
    assert review_positions(game, cache, engine, progress=False) == 13
    # the same numbers from the stones, position by position
    state = GameState(9, 9, 7, PRESETS["chinese"])
    expected = []
    for k, (color, point) in enumerate(game.moves):
        before = tempo_black_winrate(state, color)
        assert cache.positions[k].winrate == pytest.approx(before, abs=1e-6)
        assert state.play(color, point) == MOVE_OK
        after = tempo_black_winrate(state, WHITE if color == BLACK else BLACK)
        loss = (before - after) if color == BLACK else (after - before)
        expected.append((k + 1, "B" if color == BLACK else "W", loss))
    found = mistakes(game, cache.positions)
    for color in "BW":
        want = sorted((e for e in expected if e[1] == color and e[2] > 0),
                      key=lambda e: (-e[2], e[0]))
        assert [(m.move, m.loss) for m in found[color]] == \
            [(n, pytest.approx(loss, abs=1e-6)) for n, _, loss in want]
    # the passes cost the most, the capture (move 10) the least of White's moves
    assert found["B"][0].move == 11 and found["W"][0].move == 12
    assert found["W"][-1].move == 10 and found["W"][-1].vertex == "F5"


def comment_numbers(text: str) -> tuple[float, float]:
    m = re.search(r"Black winrate (\d+\.\d)%, Black score lead ([-+]\d+\.\d)", text)
    assert m, text
    return float(m.group(1)), float(m.group(2))


def play_node(state: GameState, node) -> None:
    color, move = node.get_move()
    player = BLACK if color == "b" else WHITE
    assert state.play(player, point_from_sgfmill(move, 9)) == MOVE_OK, move


def replay_variations(node, state: GameState) -> int:
    """Every variation below `node` (`state` is its position) replays legally to its end;
    returns how many there were."""
    checked = 0
    for child in list(node)[1:]:
        line = [child]
        while len(line[-1]):
            line.append(line[-1][0])
        for n in line:
            play_node(state, n)
        for _ in line:
            state.undo()
        checked += 1
    if len(node):
        play_node(state, node[0])
        checked += replay_variations(node[0], state)
    return checked


def test_review_of_a_match_game_with_random_playouts(tmp_path):
    plot = tmp_path / "winrate.png"
    code, out = run_main(tmp_path, "--evaluator", "rollout", "--visits", "16", "--plot",
                         str(plot))
    assert code == 0
    original = sgf.Sgf_game.from_bytes(GAME.read_bytes())
    reviewed = sgf.Sgf_game.from_bytes(out.read_bytes())
    moves = [n.get_move() for n in original.get_main_sequence()[1:]]
    nodes = reviewed.get_main_sequence()[1:]
    assert [n.get_move() for n in nodes] == moves  # the main line is the game
    for node in nodes:
        winrate, score = comment_numbers(node.get("C"))
        assert 0 <= winrate <= 100 and abs(score) <= 81 + 7
    root_comment = reviewed.get_root().get("C")
    assert root_comment.startswith("engine 1 black")  # the original comment is kept
    for name in ("Black", "White"):
        block = root_comment.split(f"{name}'s biggest mistakes:")[1].split("biggest")[0]
        losses = [float(x) for x in re.findall(r"move \d+ [A-HJ]\d: -(\d+\.\d)% winrate",
                                               block)]
        assert 1 <= len(losses) <= 5 and losses == sorted(losses, reverse=True)
    state = GameState(9, 9, 7, PRESETS["chinese"])
    assert replay_variations(reviewed.get_root(), state) >= 5  # best lines beside the moves
    assert plot.read_bytes().startswith(PNG_MAGIC) and plot.stat().st_size > 10_000
    cache = json.loads(Path(str(out) + ".json").read_text())
    assert sorted(map(int, cache["positions"])) == list(range(len(moves) + 1))


def test_rerun_continues_from_the_sidecar(tmp_path, capsys):
    game = tmp_path / "short.sgf"
    game.write_bytes(SHORT)
    args = ("--evaluator", "rollout", "--visits", "8")
    assert run_main(tmp_path, *args, game=game)[0] == 0
    assert "analysed 13 positions (0 from" in capsys.readouterr().out
    sidecar = tmp_path / "reviewed.sgf.json"
    data = json.loads(sidecar.read_text())
    first = {i: p for i, p in data["positions"].items()}
    for i in ("5", "6", "7", "12"):
        del data["positions"][i]
    sidecar.write_text(json.dumps(data))
    assert run_main(tmp_path, *args, game=game)[0] == 0
    assert "analysed 4 positions (9 from" in capsys.readouterr().out
    again = json.loads(sidecar.read_text())["positions"]
    assert {i: again[i] for i in first if i not in ("5", "6", "7", "12")} == \
        {i: p for i, p in first.items() if i not in ("5", "6", "7", "12")}
    assert run_main(tmp_path, *args, game=game)[0] == 0
    assert "analysed 0 positions (13 from" in capsys.readouterr().out
    # other settings: the sidecar does not apply
    assert run_main(tmp_path, "--evaluator", "rollout", "--visits", "9", game=game)[0] == 0
    assert "analysed 13 positions (0 from" in capsys.readouterr().out


def test_handicap_game_and_bad_games(tmp_path, capsys):
    handicap = tmp_path / "h.sgf"
    handicap.write_bytes(b"(;GM[1]FF[4]SZ[9]KM[0.5]HA[2]AB[cc][gg];W[ee];B[ce];W[])")
    game = load_game(handicap.read_bytes())
    assert game.first == WHITE and len(game.black) == 2 and not game.white
    code, out = run_main(tmp_path, "--evaluator", "uniform", "--visits", "4", game=handicap)
    assert code == 0
    positions = json.loads(Path(str(out) + ".json").read_text())["positions"]
    assert [positions[str(i)]["to_move"] for i in range(4)] == ["W", "B", "W", "B"]
    illegal = tmp_path / "bad.sgf"
    illegal.write_bytes(b"(;GM[1]FF[4]SZ[9];B[ee];W[ee])")
    assert run_main(tmp_path, "--evaluator", "uniform", "--visits", "4", game=illegal)[0] == 2
    assert "move 2 (E5) is illegal" in capsys.readouterr().err
    broken = tmp_path / "broken.sgf"
    broken.write_bytes(b"(;GM[1]SZ[9];B[ee]")
    assert run_main(tmp_path, "--visits", "4", game=broken)[0] == 2
    assert "unreadable SGF" in capsys.readouterr().err
