// The positions of a game in progress, by ply, so that its moves can be stepped through while it
// goes on. The table's events give the position after each move seen live; the positions before
// them (a page opened mid-game, a reconnect that caught up with a snapshot) are read once from
// the archive (`GET /api/games/{id}?positions=true`, which serves a game in progress too).

import { api, query } from "./api.js";

const START = "B:W21-32:B1-12";

export class Positions {
  /** `invite`: the table's code, for a private table's game. */
  constructor(invite = null) {
    this.invite = invite;
    this.gameId = null;
    this.fens = new Map(); // ply -> FEN
    this.loading = null;
  }

  /** Start over with a game snapshot (or null). */
  reset(game) {
    this.gameId = game ? game.id : null;
    this.fens = new Map();
    this.loading = null;
    if (!game) return;
    this.fens.set(0, game.start_fen || START);
    this.fens.set(game.ply, game.fen);
  }

  /** The position after `ply` plies, seen in a move event. */
  add(ply, fen) {
    this.fens.set(ply, fen);
  }

  /** The position after `ply` plies, or undefined until it is loaded. */
  get(ply) {
    return this.fens.get(ply);
  }

  /** Load the positions missing up to `ply`; resolves true when the position of `ply` is known. */
  async ensure(ply) {
    if (this.fens.has(ply)) return true;
    const id = this.gameId;
    if (id === null) return false;
    if (!this.loading) {
      this.loading = api
        .get(`/api/games/${id}${query({ positions: true, invite: this.invite || undefined })}`)
        .then((record) => {
          if (this.gameId !== id) return;
          const after = (record.moves || []).map((m) => m.fen_after);
          if (record.start_position && !this.fens.has(0)) this.fens.set(0, record.start_position);
          after.forEach((fen, i) => {
            if (fen && !this.fens.has(i + 1)) this.fens.set(i + 1, fen);
          });
        })
        .catch(() => {})
        .finally(() => {
          this.loading = null;
        });
    }
    await this.loading;
    return this.gameId === id && this.fens.has(ply);
  }
}
