// Premoves, as lichess has them: during the opponent's turn a player picks a move for their
// next turn; it is sent the moment the opponent's move arrives if the server's legal moves then
// hold it, and refused in words if not. The rules stay on the server: the moves offered for a
// premove are only the board's geometry (a man one or two squares forward, forward or any way
// when capturing in pool; a king any way, any distance in pool), onto a square the player's own
// pieces do not hold.

import { between } from "./board.js";
import { movePath, parseFen, rowColToSquare, squareToRowCol } from "./notation.js";

const DIAGONALS = [
  [-1, -1],
  [-1, 1],
  [1, -1],
  [1, 1],
];

/** The premoves `colour` may pick in the position `fen` (text like "11-15" or "15x24"). */
export function premoveCandidates(fen, colour, variant = "english") {
  const { pieces } = parseFen(fen);
  const forward = colour === "black" ? 1 : -1;
  const moves = [];
  for (const [square, piece] of pieces) {
    if (piece.color !== colour) continue;
    const { row, col } = squareToRowCol(square);
    for (const [dr, dc] of DIAGONALS) {
      const ahead = dr === forward;
      const reach = piece.king ? (variant === "pool" ? 7 : 2) : 2;
      for (let distance = 1; distance <= reach; distance++) {
        const r = row + dr * distance;
        const c = col + dc * distance;
        if (r < 0 || r > 7 || c < 0 || c > 7) break;
        const target = rowColToSquare(r, c);
        const own = pieces.get(target);
        if (own && own.color === colour) break; // blocked by the player's own piece
        const step = distance === 1;
        // A man steps forward only; it captures forward in English, any way in pool.
        if (!piece.king && !ahead && (step || variant !== "pool")) continue;
        // A flying king's long move is a capture if it passes a piece; any other is by length.
        const flying = variant === "pool" && piece.king;
        const capture = flying ? between(square, target).some((s) => pieces.has(s)) : !step;
        moves.push(`${square}${capture ? "x" : "-"}${target}`);
      }
    }
  }
  return moves;
}

/**
 * What to send for `premove` now that `legalMoves` (the server's) are on offer: {move} when one
 * legal move starts with the premove's squares (a capture may go on from its landing square),
 * else {reason} in words.
 */
export function resolvePremove(premove, legalMoves) {
  const path = movePath(premove);
  const exact = legalMoves.find((m) => movePath(m).join() === path.join());
  if (exact) return { move: exact };
  const longer = legalMoves.filter((m) => {
    const p = movePath(m);
    return p[0] === path[0] && (p[1] === path[1] || p[p.length - 1] === path[path.length - 1]);
  });
  if (longer.length === 1) return { move: longer[0] };
  if (longer.length > 1)
    return { reason: `Premove ${premove} not played: it can go on more than one way.` };
  const captures = legalMoves.filter((m) => m.includes("x"));
  if (captures.length)
    return { reason: `Premove ${premove} not played: you must capture (${captures.join(", ")}).` };
  return { reason: `Premove ${premove} not played: it is not a legal move now.` };
}
