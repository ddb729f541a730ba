"""Fill PositionBatch rows from a GameState (the search root, single evaluations, `kata-raw-nn`)."""

from dosaku.engine.evaluators.evaluator import HISTORY_BOARDS, HISTORY_MOVES, PositionBatch
from dosaku.engine.rules import board as B
from dosaku.engine.rules.constants import NULL_POINT
from dosaku.engine.rules.game import GameState


def batch_row_from_game(batch: PositionBatch, i: int, game: GameState) -> None:
    """Row i of batch = the game's current position, its last moves (passes included), the
    boards 1 and 2 plies ago and the legal actions of the side to move."""
    B.copy_board(batch.boards[i], game.board)
    for k in range(HISTORY_BOARDS):
        B.copy_board(batch.history_boards[i, k], game.board_before(k + 1))
    recent = game.moves[::-1][:HISTORY_MOVES]
    for k in range(HISTORY_MOVES):
        color, point = recent[k] if k < len(recent) else (0, NULL_POINT)
        batch.recent_colors[i, k] = color
        batch.recent_points[i, k] = point
    batch.to_move[i] = game.to_move
    batch.handicap_stones = game.handicap
    batch.legal[i] = game.legal_mask(game.to_move)


def position_batch(game: GameState) -> PositionBatch:
    """A one-row batch holding the game's current position (for a single evaluation)."""
    batch = PositionBatch(1, game.width, game.height, game.komi, game.rules)
    batch_row_from_game(batch, 0, game)
    batch.count = 1
    return batch
