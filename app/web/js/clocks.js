// A game's clocks as the server keeps them: each side's time left at a moment of the server's
// clock, the side to move counting down from that moment. Every figure comes from the server:
// a move event says when it was accepted (`at`) and the times left then, so a move that reached
// the page late (after a reconnect, a stalled link, a busy tab) is counted from when it was
// made, never from when it arrived.

export class GameClocks {
  /** `serverNow()`: the server's current Unix time in ms, as the page estimates it. */
  constructor(serverNow) {
    this.serverNow = serverNow;
    this.left = null; // {black, white} ms, or null for an untimed game
    this.running = null; // the colour whose time runs, or null
    this.at = 0; // the server's time (Unix ms) at which `left` held
  }

  /**
   * The times `left` ({black, white} ms, or null) at the server's time `at` (Unix ms; the
   * present when the server sends no time), `running` the colour counting down from then.
   */
  set(left, running, at = null) {
    this.left = left ? { ...left } : null;
    this.running = left ? running : null;
    this.at = typeof at === "number" ? at : this.serverNow();
  }

  /** Stop the clock that runs, keeping what it showed (the game is over). */
  stop(left = null) {
    if (left) this.left = { ...left };
    else if (this.left && this.running) this.left[this.running] = this.remaining(this.running);
    this.running = null;
  }

  /** `colour`'s time left now, in ms (null for an untimed game). */
  remaining(colour) {
    if (!this.left) return null;
    const base = this.left[colour];
    return colour === this.running ? base - (this.serverNow() - this.at) : base;
  }
}
