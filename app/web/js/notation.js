// PDN notation for display: square geometry, FEN reading, move paths and game-over wording.
// The rules themselves stay on the server: legal moves always come from it.

export const FILES = "abcdefgh";

/** Board row (0 = rank 8, the top of a Black-at-top diagram) and column (0 = file a). */
export function squareToRowCol(square) {
  const row = Math.floor((square - 1) / 4);
  const col = 2 * ((square - 1) % 4) + (row % 2 === 0 ? 1 : 0);
  return { row, col };
}

/** The PDN square number on (row, col), or null on a light square. */
export function rowColToSquare(row, col) {
  if ((row + col) % 2 === 0) return null;
  return row * 4 + Math.floor(col / 2) + 1;
}

/**
 * Read a PDN FEN (`B:W18,24,K27:B12,16`; ranges such as `21-32` and a trailing `.` accepted)
 * into `{turn, pieces}` where pieces maps square → {color, king}.
 */
export function parseFen(fen) {
  const text = String(fen).trim().replace(/\.$/, "");
  const parts = text.split(":");
  const turn = parts[0].trim().toUpperCase() === "W" ? "white" : "black";
  const pieces = new Map();
  for (const part of parts.slice(1)) {
    const body = part.trim();
    if (!body) continue;
    const color = body[0].toUpperCase() === "W" ? "white" : "black";
    for (const raw of body.slice(1).split(",")) {
      let token = raw.trim();
      if (!token) continue;
      const king = token[0].toUpperCase() === "K";
      if (king) token = token.slice(1);
      const range = token.match(/^(\d+)-(\d+)$/);
      const squares = range
        ? Array.from(
            { length: Number(range[2]) - Number(range[1]) + 1 },
            (_, i) => Number(range[1]) + i,
          )
        : [Number(token)];
      for (const square of squares) {
        if (square >= 1 && square <= 32) pieces.set(square, { color, king });
      }
    }
  }
  return { turn, pieces };
}

/** Squares a move text visits: "15x24x31" → [15, 24, 31]; "11-15" → [11, 15]. */
export function movePath(text) {
  return String(text)
    .split(/[-x]/)
    .map((s) => Number(s))
    .filter((n) => Number.isInteger(n) && n > 0);
}

const VARIANT_NAMES = {
  english: "English draughts",
  pool: "American pool checkers",
};

export function variantName(variant) {
  return VARIANT_NAMES[variant] || variant;
}

/** The variants as [value, name] pairs, in the order the forms offer them. */
export const VARIANTS = Object.entries(VARIANT_NAMES);

const COLOR_NAMES = { black: "Black", white: "White" };

export function colorName(color) {
  return COLOR_NAMES[color] || color;
}

/** Who won, from a PDN result: "1-0" is a Black win (Black moves first). */
function winnerFromResult(result) {
  if (result === "1-0") return "black";
  if (result === "0-1") return "white";
  return null;
}

/**
 * The game-over sentence shown to players: "Black wins: White cannot move.",
 * "Draw: the same position occurred five times."
 */
export function describeOutcome({ result, termination, variant, winner, reason }) {
  const won = winner || winnerFromResult(result);
  const loser = won ? (won === "black" ? "white" : "black") : null;
  const pool = variant === "pool";
  const reasons = {
    no_moves: loser ? `${colorName(loser)} cannot move` : "no legal move left",
    resignation: loser ? `${colorName(loser)} resigned` : "resignation",
    timeout: loser ? `${colorName(loser)} ran out of time` : "time ran out",
    agreement: "agreed by both players",
    repetition: pool
      ? "the same position occurred three times"
      : "the same position occurred five times",
    move_limit: pool
      ? "30 moves each without a capture or a crowning"
      : "40 moves each without a capture or a man move",
    kings_endgame: "three kings against one king, the lone king held out",
    abandoned: loser ? `${colorName(loser)} left the game` : "a player left the game",
    admin: reason ? `ended by an administrator (${reason})` : "ended by an administrator",
  };
  // Who aborted it and why ("Black aborted it", "White did not make a first move in time").
  if (termination === "aborted") return reason ? `Game aborted: ${reason}.` : "Game aborted.";
  if (termination === "admin" && result === "*") {
    return `Game aborted by an administrator${reason ? ` (${reason})` : ""}.`;
  }
  const why = reasons[termination] || (termination ? termination.replace(/_/g, " ") : "");
  const head = won ? `${colorName(won)} wins` : result === "1/2-1/2" ? "Draw" : "Game over";
  return why ? `${head}: ${why}.` : `${head}.`;
}

/**
 * Group move texts into numbered PDN rows: [{number, black: {text, ply}, white: {text, ply}}].
 * A game starting with White to move opens with "1. ... 23-19".
 */
export function moveRows(moves, startTurn = "black") {
  const rows = [];
  let number = 1;
  let row = null;
  moves.forEach((text, index) => {
    const ply = index + 1;
    const color = (index + (startTurn === "white" ? 1 : 0)) % 2 === 0 ? "black" : "white";
    if (color === "black" || row === null) {
      row = { number: number++, black: null, white: null };
      rows.push(row);
    }
    row[color] = { text, ply };
  });
  return rows;
}

function otherColour(colour) {
  return colour === "black" ? "white" : "black";
}

/** How a draw came about, in a few words: "by repetition", "by agreement". */
function drawWords(termination, variant) {
  const pool = variant === "pool";
  return (
    {
      agreement: "by agreement",
      repetition: "by repetition",
      move_limit: pool ? "by the 30-move rule" : "by the 40-move rule",
      kings_endgame: "three kings against one",
      admin: "by an administrator",
    }[termination] || ""
  );
}

/**
 * Whose the result is: "win", "loss" or "draw" for the player of `colour`, "aborted" for a game
 * that counts for nobody, null while it is in progress.
 */
export function outcomeFor(game, colour) {
  if (game.status === "playing") return null;
  if (game.result === "*") return "aborted";
  if (game.result === "1/2-1/2") return "draw";
  const won = game.winner || winnerFromResult(game.result);
  if (!won) return null;
  return won === colour ? "win" : "loss";
}

/**
 * The game-over sentence for one of its players, from their side: "You won — White resigned.",
 * "You lost on time.", "Draw by repetition."; a spectator (`colour` null) gets the neutral
 * sentence of describeOutcome.
 */
export function describeOutcomeFor(game, colour) {
  if (!colour) return describeOutcome(game);
  const outcome = outcomeFor(game, colour);
  const { termination, variant, reason } = game;
  const because = reason ? ` (${reason})` : "";
  if (outcome === "aborted" || outcome === null) return describeOutcome(game);
  if (outcome === "draw") {
    const how = drawWords(termination, variant);
    return `Draw${how ? ` ${how}` : ""}${because}.`;
  }
  const them = colorName(otherColour(colour));
  if (outcome === "win") {
    const why = {
      no_moves: `${them} cannot move`,
      resignation: `${them} resigned`,
      timeout: `${them} ran out of time`,
      abandoned: `${them} left the game`,
      admin: `decided by an administrator${because}`,
    }[termination];
    return why ? `You won — ${why}.` : "You won.";
  }
  if (termination === "timeout") return "You lost on time.";
  const why = {
    no_moves: "you cannot move",
    resignation: "you resigned",
    abandoned: "you left the game",
    admin: `decided by an administrator${because}`,
  }[termination];
  return why ? `You lost — ${why}.` : "You lost.";
}

/**
 * An archived game's result from one player's side, for lists: "Won — opponent resigned",
 * "Lost on time", "Draw by repetition", "Aborted".
 */
export function resultFor(game, colour) {
  const outcome = outcomeFor(game, colour);
  if (outcome === null) return game.status === "playing" ? "playing" : game.result;
  if (outcome === "aborted") return "Aborted";
  if (outcome === "draw") {
    const how = drawWords(game.termination, game.variant);
    return how ? `Draw ${how}` : "Draw";
  }
  const head = outcome === "win" ? "Won" : "Lost";
  const t = game.termination;
  if (t === "timeout") return `${head} on time`;
  const how =
    outcome === "win"
      ? {
          no_moves: "opponent cannot move",
          resignation: "opponent resigned",
          abandoned: "opponent left",
          admin: "by an administrator",
        }[t]
      : {
          no_moves: "no move left",
          resignation: "resigned",
          abandoned: "left the game",
          admin: "by an administrator",
        }[t];
  return how ? `${head} — ${how}` : head;
}
