"""The search: iterative deepening principal-variation alpha-beta over the rules' bitboards.

A node is five ints, seen from the side to move: (own men, own kings, opponent men, opponent
kings, black to move); moves are the rules' internal (path of bit indices, captured mask) tuples,
so no move text or ``Position`` is built inside the tree. On top of plain negamax: a
transposition table keyed by the node itself, captures searched to the end at the leaves
(capturing is compulsory, so a position with a capture pending has no static value), the
transposition-table move then killers then history first, late quiet moves searched shallower
first, forced moves not counted as depth, and a repetition on the search path scored as a draw.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from app.engine.book import book_move
from app.engine.egdb import Egdb, outcome, shipped_egdb
from app.engine.evaluate import (
    KING_VALUE,
    LAZY_MARGIN,
    MAN,
    UNBOUNDED,
    Evaluator,
    make_evaluator,
    make_positional,
)
from app.engine.movegen import (
    can_step,
    english_captures,
    flying_capturers,
    king_slides,
    pool_captures,
    quiet_moves,
)
from app.rules.board import (
    CROWN_ROW,
    FULL,
    Color,
)
from app.rules.position import Position
from app.rules.variants import InternalMove, Variant

Node = tuple[int, int, int, int, bool]

INFINITE = 32000
WIN = 30000
"""A side with no move has lost: it scores ``-(WIN - ply)``, so the quickest win scores best."""
_WON = WIN - 1000
MAX_PLY = 120
_EXACT, _LOWER, _UPPER = 0, 1, 2
_TT_SIZE = 1 << 20
_CHECK_EVERY = 512
_EGDB_PIECES_AT_MOST = 5
_BIT = tuple(1 << i for i in range(32))
"""The bit of each square: read from a table, not shifted (a shift makes a new int)."""
_BLACK_CROWN = CROWN_ROW[Color.BLACK]
_WHITE_CROWN = CROWN_ROW[Color.WHITE]


@dataclass(frozen=True, slots=True)
class Limits:
    """How long and how well to think. Picklable, so a process pool can take it."""

    movetime_ms: int | None = None
    """Wall-clock budget; the search stops within a few hundred nodes of it."""
    cpu_time: bool = False
    """Count ``movetime_ms`` in this process's CPU time instead of the wall clock: a measurement
    (a ladder of levels on a busy machine) then does not depend on what else the machine runs."""
    nodes: int | None = None
    depth: int | None = None
    simple: bool = False
    """The weak levels' evaluation: material and a little advancement."""
    noise: int = 0
    """Up to this many hundredths of a man added at random to each root move's score."""
    book: bool = False
    """Play from the opening book when the position is in it."""
    seed: int | None = None
    """For the noise and the book's choice; None draws from the system."""
    egdb: bool = False
    """Take the exact result of positions of few pieces from the endgame database (English
    draughts only: pool has none, and its searches ignore this)."""


@dataclass(frozen=True, slots=True)
class SearchResult:
    """The move chosen (in the notation of ``checkers moves``) and how it was found."""

    move: str
    depth: int
    """The last depth searched to the end (0 for a book move or a single legal move)."""
    nodes: int
    score: int
    """Hundredths of a man for the side to move; beyond ±29,000 a forced win or loss."""
    pv: tuple[str, ...]
    millis: int
    book: bool = False


class _Stop(Exception):
    """The budget ran out: unwind to the root."""


def move_text(move: InternalMove) -> str:
    path, captured = move
    return ("x" if captured else "-").join([str(i + 1) for i in path])


def node_of(position: Position) -> Node:
    if position.turn is Color.BLACK:
        return (
            position.black_men,
            position.black_kings,
            position.white_men,
            position.white_kings,
            True,
        )
    return (
        position.white_men,
        position.white_kings,
        position.black_men,
        position.black_kings,
        False,
    )


def child_of(node: Node, move: InternalMove) -> tuple[Node, bool]:
    """The node after ``move`` and whether the move can be undone (a king's plain step)."""
    men, kings, opp_men, opp_kings, black = node
    path, captured = move
    source, target = 1 << path[0], 1 << path[-1]
    if men & source:
        men ^= source
        if target & (_BLACK_CROWN if black else _WHITE_CROWN):
            kings |= target
        else:
            men |= target
        reversible = False
    else:
        kings ^= source ^ target
        reversible = not captured
    if captured:
        opp_men &= ~captured
        opp_kings &= ~captured
    return (opp_men, opp_kings, men, kings, not black), reversible


class Searcher:
    """One search's state: counters, tables, the clock. Made afresh for every ``search``."""

    def __init__(self, variant: Variant, limits: Limits, rng: random.Random) -> None:
        self.generate = variant._generate
        self.captures = variant._captures
        evaluator = make_evaluator(variant.name, simple=limits.simple)
        self.evaluate_black: Evaluator = evaluator
        self.positional = make_positional(variant.name, simple=limits.simple)
        self.lazy_margin = UNBOUNDED if limits.simple else LAZY_MARGIN
        """The evaluation's lazy margin, for the leaf loop's own test (the simple one has none)."""
        self.king_value = KING_VALUE[variant.name]
        self.english = variant.name == "english"
        self.path: set[Node] = set()
        self.leaf_constants = (
            self.english,
            self.path,
            self.positional,
            self.lazy_margin,
            self.king_value,
        )
        """What the leaf loop reads from ``self``, in one tuple: one read per call."""
        self.frontier_move: InternalMove | None = None
        self.tt: dict[Node, tuple[int, int, int, InternalMove | None]] = {}
        self.killers: list[list[InternalMove | None]] = [[None, None] for _ in range(MAX_PLY + 2)]
        self.history_black: defaultdict[InternalMove, int] = defaultdict(int)
        self.history_white: defaultdict[InternalMove, int] = defaultdict(int)
        """The history heuristic: how much each quiet move has cut off, per colour."""
        self.nodes = 0
        self.limits = limits
        self.rng = rng
        self.clock = time.process_time if limits.cpu_time else time.perf_counter
        self.started = self.clock()
        self.deadline = (
            self.started + limits.movetime_ms / 1000 if limits.movetime_ms is not None else None
        )
        self.node_limit = limits.nodes
        self.next_check = min(_CHECK_EVERY, limits.nodes) if limits.nodes else _CHECK_EVERY
        self.egdb: Egdb | None = None
        self.egdb_pieces = _EGDB_PIECES_AT_MOST if limits.egdb and self.english else 0
        """Nodes with this many pieces or fewer are probed (the database is read at the first).
        The database is English draughts': pool's flying kings and backward captures by men
        make other endings (two kings against one draws there), so pool never reads it."""
        self.probes = 0

    # -- budget ----------------------------------------------------------------------------------

    def _check(self) -> None:
        if self.node_limit is not None and self.nodes >= self.node_limit:
            raise _Stop
        if self.deadline is not None and self.clock() >= self.deadline:
            raise _Stop
        step = self.nodes + _CHECK_EVERY
        self.next_check = min(step, self.node_limit) if self.node_limit else step

    # -- the endgame database --------------------------------------------------------------------

    def probe(
        self, men: int, kings: int, opp_men: int, opp_kings: int, black: bool, ply: int
    ) -> int | None:
        """The exact score of a node of few pieces: a draw is 0, a win or a loss in ``d``
        plies scores as the search's own forced results, ``WIN - (ply + d)``."""
        database = self.egdb
        if database is None:
            database = self.egdb = shipped_egdb()
            if database is None:
                self.egdb_pieces = 0
                return None
            self.egdb_pieces = database.pieces
        value = database.value(men, kings, opp_men, opp_kings, black)
        if value is None:
            return None
        self.probes += 1
        if not value:
            return 0
        distance = ply + value - 1
        return WIN - distance if value % 2 == 0 else distance - WIN

    # -- the tree --------------------------------------------------------------------------------

    def quiesce(
        self,
        men: int,
        kings: int,
        opp_men: int,
        opp_kings: int,
        black: bool,
        alpha: int,
        beta: int,
        ply: int,
        moves: list[InternalMove] | None = None,
        jumping: int = 0,
        flying: int = 0,
        empty: int = 0,
    ) -> int:
        """The value of a node whose children are leaves: a node with a capture pending (in
        quiescence: every capture may be chosen, they are compulsory, so there is no standing
        pat), or, given its ``moves``, a node one ply above the search's horizon.

        Each child is evaluated here without a call of its own (lazily: the evaluation is
        given the window), unless it has a capture pending, which is played out by calling
        this again (with the pieces that can capture: ``jumping`` short jumpers, ``flying``
        pool kings, and the ``empty`` squares the caller has counted, 0 if not). The best move is
        left in ``frontier_move``.
        """
        if moves is None:
            self.nodes += 1
            if self.nodes >= self.next_check:
                self._check()
            opp = opp_men | opp_kings
            if not empty:
                empty = FULL ^ (men | kings | opp)
            if not (jumping or flying):
                moves = self.captures(men, kings, opp, empty, black)
            elif self.english:
                moves = english_captures(jumping, men, kings, opp, empty, black)
            else:
                moves = pool_captures(jumping, flying, opp, empty)
            if not moves:  # only at the root's first iteration: children are evaluated here
                if black:
                    down, up = men | kings, kings
                else:
                    down, up = kings, men | kings
                if not can_step(down, up, empty):
                    return ply - WIN
                if black:
                    return self.evaluate_black(men, kings, opp_men, opp_kings)
                return -self.evaluate_black(opp_men, opp_kings, men, kings)
            if ply >= MAX_PLY:
                return 0
        crown = _BLACK_CROWN if black else _WHITE_CROWN
        bit = _BIT
        nb = not black
        best = -INFINITE
        best_move: InternalMove | None = None
        # The evaluation's lazy test is done here, without a call (``evaluate.material`` written
        # out, for the side to move here): the material is the same for every child but a
        # capture or a crowning, so it is counted at the first child that needs it.
        english, path_set, positional, margin, king_value = self.leaf_constants
        counted = material = 0
        # The node count is kept in a local between the calls that need it in ``self``.
        nodes, next_check = self.nodes, self.next_check
        for move in moves:
            path, captured = move
            source, target = bit[path[0]], bit[path[-1]]
            if men & source:
                if target & crown:
                    m, k = men ^ source, kings | target
                else:
                    m, k = men ^ source | target, kings
            else:
                m, k = men, kings ^ source ^ target
                if not captured and (opp_men, opp_kings, m, k, nb) in path_set:
                    # Back to a position on the path: a draw.
                    if best < 0:
                        best, best_move = 0, move
                        if alpha < 0:
                            alpha = 0
                            if alpha >= beta:
                                break
                    continue
            if captured:
                om, ok = opp_men & ~captured, opp_kings & ~captured
            else:
                om, ok = opp_men, opp_kings
            mine = m | k
            theirs = om | ok
            empty = FULL ^ (mine | theirs)
            # Does the child's side to move have a capture pending? (movegen.jumpers written
            # out: this runs at every leaf.) Black's men jump and step towards 32, White's
            # away from it; pool's men jump both ways, its flying kings are looked at apart.
            # The row masks are written as numbers (EVEN_ROWS 0x0F0F0F0F, ODD_ROWS 0xF0F0F0F0,
            # EVEN_NOT_RIGHT 0x07070707, ODD_NOT_LEFT 0xE0E0E0E0), cut to the bits that can be
            # set where they are used: every operation is then on the board shifted down, an
            # int below 2**30, which CPython works on in one digit (a board with square 31 or
            # 32 set has two, and takes the slow path). So the jumps towards square 1 are
            # found by their landing squares (shifted down 7 or 9), moved back at the end.
            flying = 0
            if english:
                if nb:
                    down, up = theirs, ok
                else:
                    down, up = ok, theirs
            else:
                down = up = om
                if ok:
                    flying = flying_capturers(ok, mine, empty)
            pending = 0
            if down:
                shifted = mine >> 4
                pending = down & (
                    0x00EEEEEE & empty >> 7 & (shifted & 0x000F0F0F | mine >> 3 & 0x00F0F0F0)
                    | 0x00777777 & empty >> 9 & (mine >> 5 & 0x000F0F0F | shifted & 0x00F0F0F0)
                )
            if up:
                shifted = mine >> 4
                left = (
                    0x00777777 & up >> 9 & (mine >> 5 & 0x000F0F0F | shifted & 0x00F0F0F0) & empty
                )
                right = (
                    0x00EEEEEE & up >> 7 & (shifted & 0x000F0F0F | mine >> 3 & 0x00F0F0F0) & empty
                )
                if left or right:
                    pending |= left << 9 | right << 7
            if pending or flying:
                if ply + 1 >= MAX_PLY:
                    score = 0
                else:
                    self.nodes = nodes
                    score = -self.quiesce(
                        om, ok, m, k, nb, -beta, -alpha, ply + 1, None, pending, flying, empty
                    )
                    nodes, next_check = self.nodes, self.next_check
            else:
                nodes += 1
                if nodes >= next_check:
                    self.nodes = nodes
                    self._check()
                    next_check = self.next_check
                # Without a capture, the side to move has lost if it has no step either:
                # pieces going down step 4 squares on, or 3 (odd rows but the left edge), or
                # 5 (even rows but the right edge); going up, the same back. (Tested as the
                # pieces against the empty squares shifted back, in one digit, as above.)
                if nb:
                    down, up = theirs, ok
                else:
                    down, up = ok, theirs
                if not (
                    down & (empty >> 4 | empty >> 3 & 0x00E0E0E0 | empty >> 5 & 0x07070707)
                    or (up >> 4 | up >> 5 & 0x07070707 | up >> 3 & 0x00E0E0E0) & empty
                ):
                    score = WIN - ply - 1  # the child's side has no move: lost
                else:
                    # The parent's material, unless this move takes or crowns.
                    same = not (captured or men & source and target & crown)
                    if same and counted:
                        total, lead = counted, material
                    else:
                        total = (mine | theirs).bit_count()
                        lead = MAN * (m.bit_count() - om.bit_count()) + king_value * (
                            k.bit_count() - ok.bit_count()
                        )
                        if lead > 0:
                            lead += lead * (24 - total) // 48
                        elif lead < 0:
                            lead -= -lead * (24 - total) // 48
                        if same:
                            counted, material = total, lead
                    if lead + margin <= alpha:
                        score = lead + margin
                    elif lead - margin >= beta:
                        score = lead - margin
                    elif black:
                        score = positional(m, k, om, ok, lead, total)
                    else:
                        score = -positional(om, ok, m, k, -lead, total)
            if score > best:
                best, best_move = score, move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        self.nodes = nodes
        self.frontier_move = best_move
        return best

    def negamax(
        self,
        men: int,
        kings: int,
        opp_men: int,
        opp_kings: int,
        black: bool,
        depth: int,
        alpha: int,
        beta: int,
        ply: int,
    ) -> int:
        if depth <= 0 or ply >= MAX_PLY:
            return self.quiesce(men, kings, opp_men, opp_kings, black, alpha, beta, ply)
        self.nodes += 1
        if self.nodes >= self.next_check:
            self._check()
        if self.egdb_pieces and (men | kings | opp_men | opp_kings).bit_count() <= self.egdb_pieces:
            exact = self.probe(men, kings, opp_men, opp_kings, black, ply)
            if exact is not None:
                return exact
        # One ply above the horizon the table is not worth its cost: the children are evaluated
        # in the loop anyway.
        tt_move = None
        if depth > 1:
            entry = self.tt.get((men, kings, opp_men, opp_kings, black))
            if entry is not None:
                entry_depth, flag, score, tt_move = entry
                if entry_depth >= depth:
                    if score > _WON:
                        score -= ply
                    elif score < -_WON:
                        score += ply
                    if flag == _EXACT:
                        return score
                    if flag == _LOWER:
                        if score >= beta:
                            return score
                    elif score <= alpha:
                        return score
        opp = opp_men | opp_kings
        empty = FULL ^ (men | kings | opp)
        if self.english:
            if black:
                down, up = men | kings, kings
            else:
                down, up = kings, men | kings
            # movegen.jumpers written out, with the row masks as numbers (see quiesce).
            jumping = 0
            if down:
                shifted = opp >> 4
                jumping = down & (
                    0x00EEEEEE & empty >> 7 & (shifted & 0x000F0F0F | opp >> 3 & 0x00F0F0F0)
                    | 0x00777777 & empty >> 9 & (opp >> 5 & 0x000F0F0F | shifted & 0x00F0F0F0)
                )
            if up:
                shifted = opp >> 4
                left = 0x00777777 & up >> 9 & (opp >> 5 & 0x000F0F0F | shifted & 0x00F0F0F0) & empty
                right = (
                    0x00EEEEEE & up >> 7 & (shifted & 0x000F0F0F | opp >> 3 & 0x00F0F0F0) & empty
                )
                if left or right:
                    jumping |= left << 9 | right << 7
            if jumping:
                moves = english_captures(jumping, men, kings, opp, empty, black)
            else:
                moves = quiet_moves(down, up, empty)
        else:
            jumping = 0
            if men:  # as above, the men jumping both ways
                shifted = opp >> 4
                jumping = men & (
                    0x00EEEEEE & empty >> 7 & (shifted & 0x000F0F0F | opp >> 3 & 0x00F0F0F0)
                    | 0x00777777 & empty >> 9 & (opp >> 5 & 0x000F0F0F | shifted & 0x00F0F0F0)
                )
                shifted = opp >> 4
                left = (
                    0x00777777 & men >> 9 & (opp >> 5 & 0x000F0F0F | shifted & 0x00F0F0F0) & empty
                )
                right = (
                    0x00EEEEEE & men >> 7 & (shifted & 0x000F0F0F | opp >> 3 & 0x00F0F0F0) & empty
                )
                if left or right:
                    jumping |= left << 9 | right << 7
            flying = flying_capturers(kings, opp, empty) if kings else 0
            if jumping or flying:
                moves = pool_captures(jumping, flying, opp, empty)
            else:
                moves = quiet_moves(men, 0, empty) if black else quiet_moves(0, men, empty)
                if kings:
                    moves += king_slides(kings, empty)
        if not moves:
            return ply - WIN
        capture = moves[0][1] != 0
        if len(moves) == 1:
            depth += 1  # a forced move is no choice: do not let it use up the depth
        else:
            if capture:
                moves.sort(key=_captured_count, reverse=True)
            else:
                killers = self.killers[ply]
                if depth > 1:
                    moves.sort(
                        key=(self.history_black if black else self.history_white).__getitem__,
                        reverse=True,
                    )
                    killer = killers[1]
                    if killer is not None and killer in moves:
                        moves.remove(killer)
                        moves.insert(0, killer)
                killer = killers[0]
                if killer is not None and killer in moves:
                    moves.remove(killer)
                    moves.insert(0, killer)
            if tt_move is not None and tt_move in moves:
                moves.remove(tt_move)
                moves.insert(0, tt_move)
            if depth == 1:
                # The children are leaves (or captures played out): evaluated in one loop.
                best = self.quiesce(men, kings, opp_men, opp_kings, black, alpha, beta, ply, moves)
                if best >= beta and not capture:
                    self._cut(self.frontier_move, black, 1, ply)
                return best
        crown = _BLACK_CROWN if black else _WHITE_CROWN
        bit = _BIT
        nb = not black
        best = -INFINITE
        best_move: InternalMove | None = None
        original_alpha = alpha
        path_set = self.path
        negamax = self.negamax
        for index, move in enumerate(moves):
            path, captured = move
            source, target = bit[path[0]], bit[path[-1]]
            reversible = False
            if men & source:
                if target & crown:
                    m, k = men ^ source, kings | target
                else:
                    m, k = men ^ source | target, kings
            else:
                m, k = men, kings ^ source ^ target
                reversible = not captured
            if captured:
                om, ok = opp_men & ~captured, opp_kings & ~captured
            else:
                om, ok = opp_men, opp_kings
            # A king's step may go back to a position on the path: a draw. (The path is left as
            # it is if the budget runs out below: the search is over then.)
            repeated = False
            if reversible:
                child = (om, ok, m, k, nb)
                repeated = child in path_set
                if not repeated:
                    path_set.add(child)
            # Principal-variation search: the first move with the full window, the others
            # with a null window (a late quiet one also a ply shallower), re-searched when
            # they turn out better.
            if repeated:
                score = 0
            elif index == 0:
                score = -negamax(om, ok, m, k, nb, depth - 1, -beta, -alpha, ply + 1)
            else:
                reduced = depth - 2 if index >= 3 and depth >= 3 and not capture else depth - 1
                score = -negamax(om, ok, m, k, nb, reduced, -alpha - 1, -alpha, ply + 1)
                if score > alpha and reduced < depth - 1:
                    score = -negamax(om, ok, m, k, nb, depth - 1, -alpha - 1, -alpha, ply + 1)
                if alpha < score < beta:
                    score = -negamax(om, ok, m, k, nb, depth - 1, -beta, -alpha, ply + 1)
            if reversible and not repeated:
                path_set.discard(child)
            if score > best:
                best = score
                best_move = move
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
        if best >= beta and not capture:
            self._cut(best_move, black, depth, ply)
        if len(self.tt) >= _TT_SIZE:
            self.tt.clear()
        stored = best + ply if best > _WON else best - ply if best < -_WON else best
        flag = _LOWER if best >= beta else _UPPER if best <= original_alpha else _EXACT
        self.tt[men, kings, opp_men, opp_kings, black] = (depth, flag, stored, best_move)
        return best

    def _cut(self, move: InternalMove | None, black: bool, depth: int, ply: int) -> None:
        """A quiet move cut off: it becomes the ply's first killer and gains history."""
        if move is None:
            return
        killers = self.killers[ply]
        if killers[0] != move:
            killers[1] = killers[0]
            killers[0] = move
        (self.history_black if black else self.history_white)[move] += depth * depth

    # -- the root --------------------------------------------------------------------------------

    def principal_variation(self, node: Node, first: InternalMove) -> tuple[str, ...]:
        pv = [move_text(first)]
        seen = {node}
        node, _ = child_of(node, first)
        while len(pv) < 24 and node not in seen:
            seen.add(node)
            entry = self.tt.get(node)
            if entry is None or entry[3] is None:
                break
            men, kings, opp_men, opp_kings, black = node
            legal = self.generate(
                men, kings, opp_men | opp_kings, FULL ^ (men | kings | opp_men | opp_kings), black
            )
            if entry[3] not in legal:
                break
            pv.append(move_text(entry[3]))
            node, _ = child_of(node, entry[3])
        return tuple(pv)

    def run(self, node: Node) -> SearchResult:
        men, kings, opp_men, opp_kings, black = node
        opp = opp_men | opp_kings
        moves = self.generate(men, kings, opp, FULL ^ (men | kings | opp), black)
        if not moves:
            raise ValueError("no legal move: the game is over")
        self.path.add(node)
        limits = self.limits
        max_depth = min(limits.depth or MAX_PLY - 20, MAX_PLY - 20)
        if len(moves) == 1:
            max_depth = min(max_depth, 4)
        best_move, best_score, done_depth = moves[0], 0, 0
        scores: dict[InternalMove, int] = {}
        pv: tuple[str, ...] = ()
        iteration_best: InternalMove | None = None
        try:
            for depth in range(1, max_depth + 1):
                alpha = -INFINITE
                iteration_best = None
                for index, move in enumerate(moves):
                    score = self._root_child(node, move, depth, alpha, index)
                    scores[move] = score
                    if score > alpha:
                        iteration_best = move
                        if not limits.noise:
                            alpha = score
                if limits.noise:
                    iteration_best = max(moves, key=lambda m: scores[m])
                    alpha = scores[iteration_best]
                moves.sort(key=lambda m: scores[m], reverse=True)
                best_move, best_score, done_depth = iteration_best or moves[0], alpha, depth
                pv = self.principal_variation(node, best_move)
                if abs(best_score) > _WON and depth > 2 * (WIN - abs(best_score)) + 2:
                    break  # a forced result found for good
        except _Stop:
            if not limits.noise and iteration_best is not None:
                best_move, best_score = iteration_best, scores[iteration_best]
                pv = self.principal_variation(node, best_move)
            elif done_depth == 0:
                best_move = moves[0]
                pv = (move_text(best_move),)
        if limits.noise and done_depth:
            noise = limits.noise
            chosen = max(moves, key=lambda m: scores[m] + self.rng.randint(0, noise))
            if chosen != best_move:
                best_move, best_score = chosen, scores[chosen]
                pv = (move_text(chosen),)
        millis = round((self.clock() - self.started) * 1000)
        return SearchResult(
            move_text(best_move),
            done_depth,
            self.nodes,
            best_score,
            pv or (move_text(best_move),),
            millis,
        )

    def _root_child(
        self, node: Node, move: InternalMove, depth: int, alpha: int, index: int
    ) -> int:
        child, reversible = child_of(node, move)
        if reversible and child in self.path:
            return 0
        if reversible:
            self.path.add(child)
        try:
            if index == 0 or self.limits.noise:
                return -self.negamax(*child, depth - 1, -INFINITE, -alpha, 1)
            score = -self.negamax(*child, depth - 1, -alpha - 1, -alpha, 1)
            if score > alpha:
                score = -self.negamax(*child, depth - 1, -INFINITE, -alpha, 1)
            return score
        finally:
            if reversible:
                self.path.discard(child)


def _captured_count(move: InternalMove) -> int:
    return move[1].bit_count()


def search_position(
    position: Position, limits: Limits, history: Iterable[Position] = ()
) -> SearchResult:
    """The best move in ``position`` within ``limits``; ``history`` (earlier positions of the
    game) lets the search see that going back to one of them is a repetition."""
    rng = random.Random(limits.seed)
    if limits.book:
        move = book_move(position, rng)
        if move is not None:
            return SearchResult(move, 0, 0, 0, (move,), 0, book=True)
    searcher = Searcher(position.variant, limits, rng)
    searcher.path.update(node_of(p) for p in history)
    return searcher.run(node_of(position))


def egdb_outcome(position: Position) -> int | None:
    """The endgame database's exact result of an English position of few pieces: +1 the side
    to move wins, 0 a draw, -1 a loss; None for pool or more pieces than the database holds."""
    if position.variant.name != "english":
        return None
    database = shipped_egdb()
    pieces = position.count(Color.BLACK) + position.count(Color.WHITE)
    if database is None or pieces > database.pieces:
        return None
    men, kings, opp_men, opp_kings, black = node_of(position)
    value = database.value(men, kings, opp_men, opp_kings, black)
    return None if value is None else outcome(value)


def search(
    fen: str | None, variant: str, limits: Limits, history: Sequence[str] = ()
) -> SearchResult:
    """``search_position`` from text: FEN, variant name and earlier FENs, all picklable, for a
    process pool. Raises the rules' ``InvalidFenError``, ``ValueError`` for an unknown variant
    or a position without a legal move."""
    from app.rules.variants import get_variant

    rules = get_variant(variant)
    return search_position(rules.position(fen), limits, [rules.position(f) for f in history])
