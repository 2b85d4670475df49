// The table page: live board, clocks, move list, game actions, game-over banner and chat.
// Everything shown comes from the table's snapshot and events (see docs/protocol.md). Laid out
// so that once a game has started the board, both players' bars and the game buttons fit the
// window without scrolling; the player's own side is at the bottom from the moment they sit.
//
// A move the player makes is shown made and pending until the server's event confirms it; if
// the link breaks meanwhile it is sent again (with the same ply, so never played twice) once
// the table is caught up, or refused in words. A premove waits for the opponent's move. The
// game's moves can be stepped through (the move list, ← →, End back to the live position).

import { conditionalPanel } from "./conditional.js";
import { Board, CAPTURE_NOTICE, labelsSwitch, themeSwitches } from "./board.js";
import { GameClocks } from "./clocks.js";
import { Positions } from "./positions.js";
import { premoveCandidates, resolvePremove } from "./premove.js";
import { formatClock, formatTimeControl, h, mount, redraw, setTitle, toast } from "./dom.js";
import { connectionBadge, lagBadge, live } from "./live.js";
import { renderMoveList } from "./movelist.js";
import {
  colorName,
  describeOutcomeFor,
  movePath,
  outcomeFor,
  parseFen,
  variantName,
} from "./notation.js";
import { diffBadge, diffText, ratingBadge } from "./ratings.js";
import { kindName } from "./tournamentwords.js";
import { requireUser, session } from "./session.js";
import { play } from "./sound.js";

const LOW_TIME_MS = 20000;
/** Quick chat: a phrase in one click, as lichess offers them. */
const PHRASES = ["Hello!", "Good luck", "Have fun!", "Nice move!", "Good game", "Thank you"];

/** Refused moves: the server's sentence, or ours when it speaks in engine terms (a FEN). */
const MOVE_ERRORS = new Set([
  "capture_required",
  "illegal_move",
  "invalid_move",
  "ambiguous_move",
  "not_your_turn",
  "stale_ply",
]);
const ENGINE_TALK = /\b[BW]:[WB]|\bin [BW]:/;

/** Prefixes that turn the server's other error codes into words for the player. */
const ERROR_WORDS = {
  game_over: "The game is over",
  seat_taken: "Seat taken",
  too_early: "Not yet",
  unauthorized: "Sign in first",
  not_found: "Not found",
  rate_limited: "Slow down",
};

export function render(main, params, search) {
  const tableId = params.table;
  const invite = search.get("invite");
  let wantSit = search.get("sit") === "1";
  let table = null;
  let game = null;
  const clocks = new GameClocks(() => live.serverNow());
  let spectatorFlip = false;
  let confirm = null; // "resign" | "abort" while the player is asked to confirm
  let closedReason = "";
  let notice = "";
  let withheld = false; // spectators' lines were kept from this player during the game // an answer to the player's own offer ("Your opponent declined …")
  let animateNext = false;
  let lowWarned = false;
  let chat = [];
  let pending = null; // {text, game, ply}: the player's move not yet confirmed by the server
  let premove = null; // the player's premove, waiting for the opponent's move
  let viewPly = null; // the ply shown while stepping through the moves; null: the live position
  const positions = new Positions(invite);

  const board = new Board({
    label: `Table ${tableId} board`,
    onMove: (text) => sendMove(text),
    onPremove: (text) => setPremove(text),
    onNotice: (text) => showError(text),
  });
  const title = h("h1", { text: `Table ${tableId}` });
  const [conn, stopConn] = connectionBadge();
  const [lag, stopLag] = lagBadge();
  const subtitle = h("p", { class: "muted" });
  const tournamentLine = h("p", { class: "tournament-link" }); // a tournament game's way back
  let tournament = null; // {id, name, kind} when the table's game is a tournament game
  const shareBox = h("div");
  const topBar = h("div", { class: "player-bar top" });
  const bottomBar = h("div", { class: "player-bar bottom" });
  const captureNotice = h("p", {
    class: "notice capture-notice",
    role: "status",
    hidden: true,
    text: `${CAPTURE_NOTICE}.`,
  });
  const errorBox = h("p", { class: "error-text game-error", role: "alert" });
  // The move being sent, the premove waiting, or the past position on the board: one line.
  const moveStatus = h("p", { class: "notice move-status", role: "status", hidden: true });
  const announcer = h("p", { class: "announcer visually-hidden", "aria-live": "polite" });
  const banner = h("p", { class: "banner game-over", role: "status", hidden: true });
  const chatChannel = h("p", { class: "muted chat-channel" });
  const actions = h("div", {
    class: "toolbar game-actions",
    role: "group",
    "aria-label": "Game actions",
  });
  const list = h("ol", { class: "move-list", "aria-label": "Moves", tabindex: "0" });
  const chatLog = h("ul", {
    class: "chat-log",
    "aria-label": "Chat messages",
    "aria-live": "polite",
  });
  const chatInput = h("input", {
    name: "chat",
    autocomplete: "off",
    maxlength: "300",
    "aria-label": "Chat message",
  });
  const moveInput = h("input", {
    name: "move",
    autocomplete: "off",
    spellcheck: false,
    size: "10",
    placeholder: "11-15",
    "aria-label": "Move in PDN notation",
  });
  const moveForm = h(
    "form",
    {
      class: "toolbar move-form",
      hidden: true,
      onSubmit: (event) => {
        event.preventDefault();
        const text = moveInput.value.trim();
        if (text) sendMove(text);
      },
    },
    h("label", { class: "inline" }, "Type a move", moveInput),
    h("button", { type: "submit", text: "Play" }),
  );
  /** Send a chat line; true when it went. */
  const say = (text) => {
    if (live.send({ type: "chat", table: tableId, text }, (err) => showError(describeError(err))))
      return true;
    showError("Not connected: the message was not sent.");
    return false;
  };
  const chatForm = h(
    "form",
    {
      class: "chat-form",
      onSubmit: (event) => {
        event.preventDefault();
        const text = chatInput.value.trim();
        if (text && say(text)) chatInput.value = "";
      },
    },
    chatInput,
    h("button", { type: "submit", text: "Send" }),
  );
  const quickChat = h(
    "div",
    { class: "quick-chat", role: "group", "aria-label": "Quick chat" },
    PHRASES.map((text) => h("button", { type: "button", onClick: () => say(text), text })),
  );
  const chatSignIn = h("button", {
    type: "button",
    onClick: () => requireUser("Sign in, register or play as a guest to chat."),
    text: "Sign in to chat",
  });

  const viewTools = h(
    "div",
    { class: "toolbar view-tools" },
    labelsSwitch(board),
    themeSwitches(),
  );
  // The game-over banner and the game buttons: under the board on a narrow screen, beside it on
  // a wide one (where the board then takes all the height the window has).
  const controls = h(
    "div",
    { class: "game-controls" },
    banner,
    h("section", { "aria-label": "Actions", class: "actions-box" }, actions),
  );
  const controlsBeside = h("div", { class: "controls-beside" });
  const wide = window.matchMedia("(min-width: 821px)");
  const controlsHome = h("div", { class: "controls-below" });
  const placeControls = () => (wide.matches ? controlsBeside : controlsHome).append(controls);

  const movesPanel = h(
    "section",
    { class: "panel moves-panel", "aria-labelledby": "moves-title" },
    h("h2", { id: "moves-title", text: "Moves" }),
    list,
  );
  const conditional = conditionalPanel();
  const chatPanel = h(
    "section",
    { class: "panel chat-panel", "aria-labelledby": "chat-title" },
    h("h2", { id: "chat-title", text: "Chat" }),
    chatChannel,
    chatLog,
    chatForm,
    quickChat,
    chatSignIn,
  );

  mount(
    main,
    h(
      "div",
      { class: "table-page" },
      h(
        "div",
        { class: "table-head" },
        title,
        subtitle,
        tournamentLine,
        h("span", { class: "live-status" }, lag, conn),
      ),
      shareBox,
      h(
        "div",
        { class: "game-layout" },
        h(
          "div",
          { class: "board-area" },
          topBar,
          board.element,
          bottomBar,
          h(
            "div",
            { class: "board-messages" },
            h("div", { class: "message-line" }, errorBox, moveStatus, captureNotice),
            controlsHome,
          ),
          moveForm,
          announcer,
        ),
        h(
          "aside",
          { class: "side-panel" },
          controlsBeside,
          movesPanel,
          conditional.element,
          chatPanel,
          viewTools,
        ),
      ),
    ),
  );

  // --- state from the server -------------------------------------------------------------

  function me() {
    return live.user || session.user;
  }

  function myColour() {
    const user = me();
    if (!user || !game) return null;
    if (game.black && game.black.id === user.id) return "black";
    if (game.white && game.white.id === user.id) return "white";
    return null;
  }

  /**
   * The colour the user will play at a table waiting for its game, as far as it is known: the
   * host's chosen colour, or the other one for whoever sits down. Null when drawn by lot.
   */
  function seatColour() {
    const user = me();
    if (!user || !table || !["black", "white"].includes(table.colour)) return null;
    const players = table.players || [];
    if (players[0] && players[0].id === user.id) return table.colour;
    if (players[1] && players[1].id === user.id) return other(table.colour);
    return null;
  }

  function other(colour) {
    return colour === "black" ? "white" : "black";
  }

  function seated() {
    const user = me();
    return Boolean(user && table && (table.players || []).some((p) => p.id === user.id));
  }

  function onEvent(message) {
    switch (message.type) {
      case "table":
        table = message.table;
        tournament = message.tournament || null;
        setGame(message.game);
        if (Array.isArray(message.chat)) {
          chat = message.chat.slice();
          drawChat();
        }
        if (message.chat_withheld) withheld = true;
        maybeSit();
        settlePending();
        break;
      case "synced":
        settlePending(); // draws what changed, if anything
        return;
      case "table_update":
        // The stored update knows no spectator count (each server counts its own): keep ours.
        table = { ...message.state, spectators: table ? table.spectators : undefined };
        break;
      case "game_started":
        if (game && game.id === message.game.id) return; // the snapshot already had it
        setGame(message.game);
        if (table) Object.assign(table, { status: "playing", game: message.game.id, rematch: [] });
        errorBox.textContent = "";
        announce(`A new game started. ${colourLine()}`);
        play("start");
        break;
      case "move":
        applyMove(message);
        break;
      case "draw_offered":
        if (game) game.draw_offer = message.by;
        announce(`${colorName(message.by)} offers a draw.`);
        break;
      case "draw_declined":
        if (game) game.draw_offer = null;
        if (message.by !== myColour() && myColour()) notice = "Your opponent declined your draw offer.";
        announce(`${colorName(message.by)} declined the draw.`);
        break;
      case "takeback_offered":
        if (game && game.id === message.game) game.takeback_offer = message.by;
        announce(`${colorName(message.by)} asks to take back a move.`);
        break;
      case "takeback_declined":
        if (game && game.id === message.game) game.takeback_offer = null;
        if (message.by !== myColour() && myColour()) notice = "Your opponent declined your takeback.";
        announce(`${colorName(message.by)} declined the takeback.`);
        break;
      case "takeback":
        applyTakeback(message);
        break;
      case "berserk":
        if (game && game.id === message.game) {
          game.clocks = message.clocks;
          game.berserk = { ...(game.berserk || {}), [message.colour]: true };
          clocks.set(game.clocks, runningColour(), null);
          lastBars = ""; // the bar marks who went berserk
        }
        announce(`${colorName(message.colour)} went berserk: half the time, no increment.`);
        break;
      case "player_away":
        if (game) {
          game.away = { ...(game.away || {}), [message.colour]: message.since };
          game.claim_after = message.claim_after;
          scheduleClaimCheck();
        }
        lastBars = "";
        announce(`${colorName(message.colour)} lost the connection.`);
        break;
      case "player_back":
        if (game) {
          const away = { ...(game.away || {}) };
          delete away[message.colour];
          game.away = away;
        }
        lastBars = "";
        announce(`${colorName(message.colour)} is back.`);
        break;
      case "game_ended":
        if (game && game.id === message.game) {
          Object.assign(game, {
            status: message.result === "*" ? "aborted" : "finished",
            result: message.result,
            termination: message.termination,
            winner: message.winner,
            reason: message.reason,
            legal_moves: [],
            draw_offer: null,
          });
          if (message.clocks) game.clocks = message.clocks;
          clocks.stop(message.clocks);
          game.rating_change = message.rating_change || null;
          game.clock_running = false;
          game.first_move_deadline = null;
        }
        confirm = null;
        notice = "";
        if (table) table.status = "finished";
        if (withheld) {
          // The spectators' lines kept from the players during the game: the table's chat
          // history now holds them.
          withheld = false;
          live.refreshTable(tableId);
        }
        announce(
          [
            describeOutcomeFor({ ...message, variant: game && game.variant }, myColour()),
            ratingChangeText(message.rating_change),
          ]
            .filter(Boolean)
            .join(" "),
        );
        play("end");
        break;
      case "rematch_offered":
        // `rematch` holds the ids of the players who asked.
        if (table) table.rematch = [...new Set([...(table.rematch || []), message.by.id])];
        announce(`${message.by.name} asks for a rematch.`);
        break;
      case "chat":
        chat.push(message);
        drawChat();
        return;
      case "chat_withheld":
        withheld = true; // a spectators' line, shown to the players after the game
        return;
      case "table_closed":
        closedReason =
          message.reason && !saidInResult(message.reason)
            ? message.reason
            : "The table was closed.";
        if (table) table.status = "closed";
        break;
      case "spectators":
        if (table) table.spectators = message.count;
        break;
      case "kicked":
        closedReason =
          message.reason && !saidInResult(message.reason)
            ? `You were removed: ${message.reason}`
            : "You were removed from the table.";
        break;
      default:
        return;
    }
    draw();
  }

  /** Whether the result banner already gives `reason`: an administrator's ending of the game
   * and their closing of the table (or removal of a player) come with the same words. */
  function saidInResult(reason) {
    return Boolean(game && game.status !== "playing" && game.reason === reason);
  }

  function setGame(snapshot) {
    const sameGame = Boolean(game && snapshot && game.id === snapshot.id);
    game = snapshot ? { ...snapshot } : null;
    if (!sameGame) {
      premove = null;
      viewPly = null;
      confirm = null; // a question asked about the game before (a fresh snapshot keeps it)
      positions.reset(game);
    } else positions.add(game.ply, game.fen);
    // A snapshot's clocks are read as it is sent: they hold as it arrives.
    clocks.set(game && game.clocks, game && runningColour(), null);
    lowWarned = false;
    lastBars = "";
  }

  function applyMove(message) {
    // A snapshot may already hold this move; a gap means events were lost: resync.
    if (!game || message.game !== game.id || message.ply <= game.ply) return;
    if (message.ply > game.ply + 1) {
      live.refreshTable(tableId);
      return;
    }
    const mover = game.turn;
    errorBox.textContent = "";
    notice = "";
    game.takeback_offer = null; // a move answers a takeback request
    game.moves = [...(game.moves || []), message.move];
    // While a first move is awaited (a deadline is set) no clock runs.
    const deadline = message.first_move_deadline ?? null;
    Object.assign(game, {
      ply: message.ply,
      fen: message.fen,
      turn: message.turn,
      legal_moves: message.legal_moves || [],
      clock_running: deadline === null,
      first_move_deadline: deadline,
    });
    positions.add(message.ply, message.fen);
    if (pending && pending.game === game.id && message.ply === pending.ply + 1) {
      // Our move, confirmed (or, if the server played another one at that ply, refused).
      const mine = sameMove(message.move, pending.text);
      if (!mine) showError(`Your move ${pending.text} was not played: the position changed.`);
      pending = null;
    }
    // The premove goes at once, before anything is drawn.
    if (premove && game.turn === myColour()) playPremove();
    animateNext = viewPly === null;
    lastBars = "";
    play(message.move.includes("x") ? "capture" : "move");
    if (message.clocks) game.clocks = message.clocks;
    // The times left when the server accepted the move, the next side's counting from then.
    clocks.set(game.clocks, runningColour(), message.at);
    if (game.draw_offer && game.draw_offer !== mover) game.draw_offer = null;
    moveInput.value = "";
    announce(`${colorName(mover)} played ${message.move}.`);
  }

  /** A takeback accepted: the game back at `message.ply`, the later moves dropped. */
  function applyTakeback(message) {
    if (!game || message.game !== game.id) return;
    Object.assign(game, {
      ply: message.ply,
      moves: (game.moves || []).slice(0, message.ply),
      fen: message.fen,
      turn: message.turn,
      legal_moves: message.legal_moves || [],
      clock_running: message.first_move_deadline == null,
      first_move_deadline: message.first_move_deadline ?? null,
      draw_offer: null,
      takeback_offer: null,
    });
    if (message.clocks) game.clocks = message.clocks;
    clocks.set(game.clocks, runningColour(), message.at);
    positions.reset(game);
    pending = null;
    premove = null;
    viewPly = null;
    lastBars = "";
    errorBox.textContent = "";
    notice = "";
    announce(`A move was taken back: ${colorName(message.turn)} to move.`);
  }

  /** The colour whose clock runs: the side to move once both first moves are made. */
  function runningColour() {
    if (!game || !game.clocks || game.status !== "playing" || game.clock_running === false)
      return null;
    return game.turn;
  }

  function maybeSit() {
    if (!wantSit || !table) return;
    wantSit = false;
    if (!seated() && table.status === "open" && (table.players || []).length < 2) sit();
  }

  // --- actions -------------------------------------------------------------------------------

  function act(message) {
    if (!live.send(message, (err) => showError(describeError(err)))) {
      showError("Not connected: wait for the connection to come back.");
    }
  }

  /** Play `text`: shown made and pending until the server confirms or refuses it. */
  function sendMove(text) {
    if (!game || pending) return;
    errorBox.textContent = "";
    pending = { text, game: game.id, ply: game.ply };
    transmit(pending);
    drawBoard();
    drawMoveStatus();
  }

  /** Send the pending move; with the ply it was made at, so that a second copy is refused. */
  function transmit(move) {
    live.send({ type: "move", game: move.game, move: move.text, ply: move.ply }, (err) => {
      if (pending !== move) return; // confirmed meanwhile (its first copy arrived)
      pending = null;
      showError(
        err.code === "game_over"
          ? `Your move ${move.text} was not played: the game is over.`
          : describeError(err, move.text),
      );
      if (err.code === "stale_ply") live.refreshTable(tableId);
      draw();
    });
  }

  /**
   * After a reconnect the table is caught up: the pending move was played (confirmed), can
   * still be played (sent again: at its ply the server refuses a second copy) or cannot (said).
   */
  function settlePending() {
    if (!pending) return;
    const move = pending;
    if (!game || game.id !== move.game) {
      pending = null;
      showError(`Your move ${move.text} was not played: that game is over.`);
    } else if (game.ply > move.ply) {
      pending = null;
      if (!sameMove((game.moves || [])[move.ply], move.text))
        showError(`Your move ${move.text} was not played: the position changed.`);
    } else if (game.status !== "playing") {
      pending = null;
      showError(`Your move ${move.text} was not played: the game is over.`);
    } else if (game.ply === move.ply && game.turn === myColour()) {
      transmit(move);
    }
    draw();
  }

  /** Two texts of one move: the same squares from start to end (the server may write it out). */
  function sameMove(played, text) {
    if (!played) return false;
    const a = movePath(played);
    const b = movePath(text);
    return a[0] === b[0] && a[a.length - 1] === b[b.length - 1];
  }

  /** A premove picked on the board (null: cancelled). */
  function setPremove(text) {
    premove = text;
    errorBox.textContent = "";
    drawBoard();
    drawMoveStatus();
  }

  /** The opponent has moved: play the premove if the server's legal moves hold it. */
  function playPremove() {
    const text = premove;
    premove = null;
    const { move, reason } = resolvePremove(text, game.legal_moves || []);
    if (move) {
      pending = { text: move, game: game.id, ply: game.ply };
      transmit(pending);
    } else showError(reason);
  }

  /** Show the position after `ply` plies (null or the last ply: the live position). */
  async function view(ply) {
    if (!game) return;
    const target = ply === null || ply >= game.ply ? null : Math.max(0, ply);
    if (target !== null && !(await positions.ensure(target))) {
      showError("That position could not be loaded.");
      return;
    }
    viewPly = target;
    draw();
  }

  function onKey(event) {
    if (!game || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target.closest && target.closest("input, textarea, select, .board, dialog")) return;
    const shown = viewPly === null ? game.ply : viewPly;
    const step = { ArrowLeft: shown - 1, ArrowRight: shown + 1, Home: 0, End: null }[event.key];
    if (step === undefined) return;
    event.preventDefault();
    view(step);
  }

  async function sit() {
    const user = await requireUser("Sign in, register or play as a guest to take a seat.");
    if (!user) return;
    const message = { type: "sit", table: tableId };
    if (invite) message.invite = invite;
    act(message);
  }

  function showError(text) {
    errorBox.textContent = text;
  }

  /** An error in words for a person: never the engine's (no FEN). */
  function describeError(err, moveText = "") {
    if (MOVE_ERRORS.has(err.code)) {
      if (err.message && !ENGINE_TALK.test(err.message)) return sentence(err.message);
      const captures = ((game && game.legal_moves) || []).filter((m) => m.includes("x"));
      return (
        {
          capture_required: `You must capture: ${listWords(captures)}.`,
          illegal_move: `${moveText || "That"} is not a legal move here.`,
          invalid_move: `${moveText || "That"} is not a move: write it like 11-15 or 15x24.`,
          ambiguous_move: `${moveText || "That capture"} can be played more than one way: write every landing square.`,
          not_your_turn: "It is not your move.",
          stale_ply: "The position changed; your board is being updated.",
        }[err.code] || sentence(err.message)
      );
    }
    const words = ERROR_WORDS[err.code];
    return words ? `${words}: ${err.message}` : sentence(err.message);
  }

  function sentence(text) {
    const t = String(text || "").trim();
    return t ? t[0].toUpperCase() + t.slice(1) : "Something went wrong.";
  }

  function listWords(items) {
    if (items.length <= 1) return items.join("");
    return `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
  }

  function announce(text) {
    announcer.textContent = text;
  }

  // --- drawing -------------------------------------------------------------------------------

  function draw() {
    const user = me();
    // No such table (or a private one): no board, no chat, only the words and the way back.
    const missing = !table && Boolean(closedReason);
    for (const el of [topBar, board.element, bottomBar, movesPanel, chatPanel, viewTools])
      el.hidden = missing;
    chatForm.hidden = !user;
    quickChat.hidden = !user;
    chatInput.maxLength = live.limits.chat_max_length || 300;
    chatSignIn.hidden = Boolean(user);
    drawHeader();
    drawBoard();
    drawBars();
    drawActions();
    drawBanner();
    drawChannel();
    drawMoveStatus();
    conditional.update({
      game,
      mine: Boolean(myColour()),
      myTurn: Boolean(game && game.turn === myColour()),
      days: table && table.clock ? table.clock.days : null,
    });
    if (game && game.moves && game.moves.length) {
      renderMoveList(list, {
        moves: game.moves,
        startTurn: startTurn(),
        current: viewPly === null ? game.ply : viewPly,
        onPick: (ply) => view(ply),
      });
    } else
      mount(list, h("li", { class: "muted empty", text: game ? "No moves yet." : "No game yet." }));
  }

  function startTurn() {
    return game && game.start_fen ? parseFen(game.start_fen).turn : "black";
  }

  function colourLine() {
    const colour = myColour();
    return colour ? `You play ${colorName(colour)}.` : "";
  }

  function drawHeader() {
    const colour = myColour();
    const yourMove = game && game.status === "playing" && colour && game.turn === colour;
    setTitle(`${yourMove ? "Your move · " : ""}Table ${tableId}`);
    if (!table) return;
    const clock = table.clock
      ? formatTimeControl(table.clock.base, table.clock.increment)
      : "untimed";
    title.textContent = `Table ${table.id}`;
    const bits = [variantName(table.variant), clock, table.rated ? "rated" : "casual"];
    if (table.private) bits.push("private");
    // A ballot game names its opening; another game from a position shows the position.
    if (tournament && tournament.opening) bits.push(tournament.opening);
    else if (table.start_fen) bits.push(`start ${table.start_fen}`);
    if (typeof table.spectators === "number")
      bits.push(table.spectators === 1 ? "1 spectator" : `${table.spectators} spectators`);
    subtitle.textContent = bits.join(" · ");
    const link = tournamentLine.querySelector("a");
    if (!tournament) mount(tournamentLine);
    else if (!link || link.dataset.tournament !== String(tournament.id))
      mount(
        tournamentLine,
        h("a", {
          href: `#/tournaments/${tournament.id}`,
          dataset: { tournament: String(tournament.id) },
          text: `${kindName(tournament.kind)}: ${tournament.name}${tournament.round ? `, round ${tournament.round}` : ""}`,
        }),
      );
    const code = table.invite || invite;
    if (table.private && code && seated()) {
      if (shareBox.dataset.code === code) return;
      shareBox.dataset.code = code;
      const link = `${location.origin}${location.pathname}#/table/${table.id}?invite=${encodeURIComponent(code)}`;
      const field = h("input", {
        readonly: true,
        value: link,
        size: "40",
        "aria-label": "Private link",
      });
      mount(
        shareBox,
        h(
          "div",
          { class: "panel toolbar share" },
          h("span", { text: "Invite someone with this link:" }),
          field,
          h("button", {
            type: "button",
            onClick: async () => {
              field.select();
              try {
                await navigator.clipboard.writeText(link);
                toast("Link copied");
              } catch {
                toast("Select the link and copy it");
              }
            },
            text: "Copy link",
          }),
        ),
      );
    } else {
      delete shareBox.dataset.code;
      mount(shareBox);
    }
  }

  /** True when Black is at the bottom: the player's own colour, from the moment they sit. */
  function orientation() {
    const colour = myColour() || (!game || game.status !== "playing" ? seatColour() : null);
    if (colour) return colour === "black";
    return spectatorFlip;
  }

  function drawBoard() {
    const colour = myColour();
    const moves = (game && game.moves) || [];
    if (game && viewPly !== null) {
      // A past position: only looked at.
      board.set({
        fen: positions.get(viewPly),
        flipped: orientation(),
        lastMove: viewPly ? moves[viewPly - 1] : null,
        legalMoves: [],
        interactive: false,
        premoving: false,
        premove: null,
        pending: null,
      });
      captureNotice.hidden = true;
      moveForm.hidden = true;
      return;
    }
    const fen = game ? game.fen : table && table.start_fen ? table.start_fen : "B:W21-32:B1-12";
    const playing = Boolean(game && game.status === "playing" && colour);
    const myTurn = playing && game.turn === colour;
    const canMove = myTurn && !pending;
    // During the opponent's turn the player may pick a premove.
    const premoving = playing && !myTurn;
    const legal = canMove
      ? game.legal_moves || []
      : premoving
        ? premoveCandidates(fen, colour, game.variant)
        : [];
    board.set({
      fen,
      flipped: orientation(),
      lastMove: moves.length ? moves[moves.length - 1] : null,
      legalMoves: legal,
      interactive: canMove || premoving,
      premoving,
      premove: premoving ? premove : null,
      pending: pending && game && pending.game === game.id ? pending.text : null,
      animate: animateNext || Boolean(pending),
    });
    animateNext = false;
    captureNotice.hidden = !(canMove && board.captureRequired);
    moveForm.hidden = !canMove;
  }

  /** One line under the board: the move being sent, the premove waiting, or a past position. */
  function drawMoveStatus() {
    const parts = [];
    if (game && viewPly !== null) {
      parts.push(
        h("span", {
          text: viewPly
            ? `Position after move ${viewPly} of ${game.ply}. `
            : `Starting position (${game.ply} moves played). `,
        }),
        h("button", { type: "button", onClick: () => view(null), text: "Back to the game" }),
      );
    } else if (pending) {
      const online = live.state === "open";
      parts.push(
        h("span", {
          text: online
            ? `Sending ${pending.text}…`
            : `${pending.text} not sent yet: it goes when the connection is back.`,
        }),
      );
    } else if (premove && game && game.status === "playing") {
      parts.push(
        h("span", { text: `Premove ${premove}. ` }),
        h("button", { type: "button", onClick: () => setPremove(null), text: "Cancel premove" }),
      );
    }
    moveStatus.hidden = !parts.length;
    moveStatus.dataset.kind =
      game && viewPly !== null ? "history" : pending ? "pending" : premove ? "premove" : "";
    mount(moveStatus, parts);
  }

  let lastBars = "";

  function drawBars() {
    const bottom = orientation() ? "black" : "white";
    const top = other(bottom);
    // Bars are rebuilt only when what they say changes (the clocks tick in place).
    const key = JSON.stringify([
      bottom,
      table,
      game && game.id,
      game && game.status,
      game && game.turn,
    ]);
    if (key === lastBars) {
      tickClocks();
      return;
    }
    lastBars = key;
    fillBar(topBar, top);
    fillBar(bottomBar, bottom);
  }

  function playerOf(colour) {
    if (game) return game[colour];
    return null;
  }

  function fillBar(bar, colour) {
    const player = playerOf(colour);
    const playing = Boolean(game && game.status === "playing");
    const away = playing && game.away && game.away[colour];
    const toMove = Boolean(playing && game.turn === colour);
    bar.classList.toggle("to-move", toMove);
    bar.dataset.colour = colour;
    const name = player ? player.name : table && !game ? waitingName(colour) : "—";
    const rated = player || (table && !game ? waitingPlayer(colour) : null);
    const change = game && game.rating_change ? game.rating_change[colour] : null;
    const clock = h("span", {
      class: "clock",
      dataset: { colour },
      role: "timer",
      "aria-label": `${colorName(colour)} clock`,
    });
    const user = me();
    const mine = Boolean(user && player && player.id === user.id);
    mount(
      bar,
      h(
        "span",
        { class: "name" },
        h("span", { class: `seat-dot ${colour}`, "aria-hidden": "true" }),
        h("span", { class: "visually-hidden", text: `${colorName(colour)}: ` }),
        name,
        ratingBadge(rated),
        change ? " " : null,
        change ? diffBadge(change.diff) : null,
        mine ? h("span", { class: "muted", text: " (you)" }) : null,
        game && game.berserk && game.berserk[colour]
          ? h("span", { class: "berserk", title: "Berserk: half the time, no increment", text: " ⚔ berserk" })
          : null,
        away ? h("span", { class: "muted away", text: " (disconnected)" }) : null,
      ),
      h(
        "span",
        { class: "bar-right" },
        toMove ? h("span", { class: "turn", text: mine ? "your move" : "to move" }) : null,
        h("span", { class: "countdown", role: "timer", hidden: true }),
        clock,
      ),
    );
    tickClocks();
  }

  /** The seated player shown on `colour`'s bar before a game (as `waitingName` names them). */
  function waitingPlayer(colour) {
    const [host, guest] = table.players || [];
    if (["black", "white"].includes(table.colour)) return colour === table.colour ? host : guest;
    const bottom = orientation() ? "black" : "white";
    return colour === bottom ? host : guest;
  }

  /** What a rated game did to the ratings, in words: the viewer's own change, or both. */
  function ratingChangeText(change) {
    if (!change || !game) return "";
    const mine = myColour();
    if (mine) {
      const side = change[mine];
      return `Your rating: ${side.before} → ${side.after} (${diffText(side.diff)}).`;
    }
    return ["black", "white"]
      .map((colour) => {
        const side = change[colour];
        const who = (game[colour] && game[colour].name) || colorName(colour);
        return `${who}: ${side.before} → ${side.after} (${diffText(side.diff)}).`;
      })
      .join(" ");
  }

  function waitingName(colour) {
    const players = table.players || [];
    const host = players[0];
    const guest = players[1];
    if (["black", "white"].includes(table.colour)) {
      if (colour === table.colour) return host ? host.name : "waiting for a player";
      return guest ? guest.name : "waiting for a player";
    }
    // Colours drawn by lot: the host at the bottom until the game starts.
    const bottom = orientation() ? "black" : "white";
    const player = colour === bottom ? host : guest;
    return player ? `${player.name} (colours drawn when the game starts)` : "waiting for a player";
  }

  function tickClocks() {
    for (const el of main.querySelectorAll(".clock")) {
      const colour = el.dataset.colour;
      if (!game || !game.clocks) {
        el.textContent = game ? "∞" : "";
        el.classList.remove("running", "low");
        continue;
      }
      const running = runningColour() === colour;
      const left = clocks.remaining(colour);
      el.dataset.ms = String(Math.round(left));
      el.textContent = formatClock(left);
      el.classList.toggle("running", running);
      el.classList.toggle("low", left < LOW_TIME_MS);
      if (running && left < LOW_TIME_MS && colour === myColour() && !lowWarned) {
        lowWarned = true;
        play("low");
      }
    }
    tickCountdowns();
  }

  /** The first-move deadline and a disconnected player's claim time, counted down in the bars. */
  function tickCountdowns() {
    const now = live.serverNow();
    for (const bar of [topBar, bottomBar]) {
      const box = bar.querySelector(".countdown");
      if (!box) continue;
      const colour = bar.dataset.colour;
      const playing = game && game.status === "playing";
      let text = "";
      let label = "";
      if (playing && game.first_move_deadline && game.turn === colour) {
        const left = game.first_move_deadline - now;
        text = `first move within ${formatClock(Math.max(0, left)).replace(/\.\d$/, "")}`;
        label = "First move countdown";
      } else if (playing && game.away && game.away[colour] && game.claim_after) {
        const left = game.claim_after - now;
        if (left > 0) {
          text = `win claimable in ${formatClock(left).replace(/\.\d$/, "")}`;
          label = "Claim countdown";
        } else {
          text = "win claimable now";
          label = "Claim countdown";
        }
      }
      box.hidden = !text;
      if (box.textContent !== text) box.textContent = text;
      if (label) box.setAttribute("aria-label", label);
      else box.removeAttribute("aria-label");
    }
  }

  function drawActions() {
    const buttons = [];
    const colour = myColour();
    const button = (text, onClick, cls = "") =>
      h("button", { type: "button", class: cls, onClick, text });
    if (closedReason) {
      mount(
        actions,
        h("p", { class: "notice", text: closedReason }),
        h("a", { class: "button", href: "#/", text: "Back to the lobby" }),
      );
      return;
    }
    const ask = (what) => () => {
      confirm = what;
      drawActions();
    };
    const keepPlaying = button("Keep playing", () => {
      confirm = null;
      drawActions();
    });
    const playing = game && game.status === "playing";
    if (playing && colour) {
      const opponent = other(colour);
      const myMoves = (game.moves || []).filter(
        (_, i) => (i + (startTurn() === "white" ? 1 : 0)) % 2 === (colour === "black" ? 0 : 1),
      );
      if (confirm === "resign") {
        buttons.push(
          h("span", { class: "notice", text: "Resign this game?" }),
          button(
            "Confirm resignation",
            () => {
              confirm = null;
              act({ type: "resign", game: game.id });
            },
            "danger",
          ),
          keepPlaying,
        );
      } else if (confirm === "abort" && myMoves.length === 0) {
        buttons.push(
          h("span", { class: "notice", text: "Abort this game? It counts for nobody." }),
          button(
            "Confirm abort",
            () => {
              confirm = null;
              act({ type: "abort", game: game.id });
            },
            "danger",
          ),
          keepPlaying,
        );
      } else {
        if (notice) buttons.push(h("span", { class: "notice answer", text: notice }));
        // Not at a table or in a game without them, nor when either player turned them off in
        // their settings (their seat says `takebacks: false`).
        const takebacks = Boolean(
          table &&
            table.takebacks &&
            !game.rated &&
            (table.players || []).every((seat) => seat.takebacks !== false),
        );
        if (game.takeback_offer === opponent) {
          buttons.push(
            h("span", { class: "notice", text: "Your opponent asks to take back a move." }),
            button("Accept takeback", () => act({ type: "takeback_accept", game: game.id })),
            button("Decline takeback", () => act({ type: "takeback_decline", game: game.id })),
          );
        } else if (game.takeback_offer === colour) {
          buttons.push(h("span", { class: "muted", text: "Takeback asked." }));
        } else if (takebacks && myMoves.length > 0) {
          buttons.push(
            button("Ask to take back", () => act({ type: "takeback_offer", game: game.id })),
          );
        }
        if (game.draw_offer === opponent) {
          buttons.push(
            h("span", { class: "notice", text: "Your opponent offers a draw." }),
            button("Accept draw", () => act({ type: "draw_accept", game: game.id }), "primary"),
            button("Decline draw", () => act({ type: "draw_decline", game: game.id })),
          );
        } else if (game.draw_offer === colour) {
          buttons.push(h("span", { class: "muted", text: "Draw offered." }));
        } else {
          buttons.push(button("Offer draw", () => act({ type: "draw_offer", game: game.id })));
        }
        if (
          myMoves.length === 0 &&
          tournament &&
          tournament.kind === "arena" &&
          table.clock &&
          table.clock.base > 0 &&
          !(game.berserk && game.berserk[colour])
        ) {
          // Half one's time and no increment, for a point more with a win (arena only).
          buttons.push(button("Berserk", () => act({ type: "berserk", game: game.id })));
        }
        if (myMoves.length === 0) buttons.push(button("Abort", ask("abort")));
        buttons.push(button("Resign", ask("resign"), "danger"));
        if (
          game.away &&
          game.away[opponent] &&
          game.claim_after &&
          live.serverNow() >= game.claim_after
        ) {
          buttons.push(
            button("Claim the win", () => act({ type: "claim_win", game: game.id }), "primary"),
          );
        }
      }
    } else if (seated()) {
      const players = table.players || [];
      if (game && players.length === 2) {
        const askedIds = table.rematch || [];
        const user = me();
        const iAsked = Boolean(user && askedIds.includes(user.id));
        const asked = players.filter((p) => askedIds.includes(p.id) && (!user || p.id !== user.id));
        if (asked.length) {
          const names = asked.map((p) => p.name).join(", ");
          buttons.push(h("span", { class: "notice", text: `${names} asks for a rematch.` }));
        }
        buttons.push(
          iAsked
            ? h("span", { class: "muted", text: "Rematch asked." })
            : button("Rematch", () => act({ type: "rematch", table: tableId }), "primary"),
        );
      } else if (!game || players.length < 2) {
        buttons.push(h("span", { class: "muted", text: "Waiting for an opponent…" }));
      }
      buttons.push(
        button("Leave table", () => {
          act({ type: "leave", table: tableId });
          location.hash = "#/";
        }),
      );
    } else if (table && table.status === "open" && (table.players || []).length < 2) {
      buttons.push(button("Sit down to play", () => sit(), "primary"));
    }
    if (playing && !colour) {
      // Spectators see the offers the players see.
      if (game.draw_offer)
        buttons.push(
          h("span", { class: "notice", text: `${colorName(game.draw_offer)} offers a draw.` }),
        );
      if (game.takeback_offer)
        buttons.push(
          h("span", {
            class: "notice",
            text: `${colorName(game.takeback_offer)} asks to take back a move.`,
          }),
        );
    }
    if (!colour && !seatColour()) {
      buttons.push(
        button("Flip board", () => {
          spectatorFlip = !spectatorFlip;
          lastBars = "";
          draw();
        }),
      );
    }
    if (game && game.status !== "playing")
      buttons.push(
        h("a", {
          class: "button",
          // A private table's game opens to invited spectators by the table's code.
          href: `#/games/${game.id}${invite ? `?invite=${encodeURIComponent(invite)}` : ""}`,
          text: "Replay this game",
        }),
      );
    // Every handler here reads the state when it runs: a redraw that changes nothing keeps
    // the buttons (a click on one at that moment would otherwise be lost).
    redraw(actions, buttons);
  }

  function drawBanner() {
    const over = game && game.status !== "playing";
    banner.hidden = !over;
    if (!over) return;
    const colour = myColour();
    const change = ratingChangeText(game.rating_change);
    mount(
      banner,
      describeOutcomeFor(game, colour),
      change ? h("span", { class: "rating-change", text: ` ${change}` }) : null,
    );
    // Winner and loser see different banners; spectators a neutral one.
    banner.dataset.outcome = (colour && outcomeFor(game, colour)) || "neutral";
  }

  /** Which chat the user writes to and reads: the players' or the spectators'. */
  function drawChannel() {
    const user = me();
    const playing = Boolean(game && game.status === "playing");
    if (closedReason || (table && table.status === "closed")) {
      // Nobody sits at a closed table any more: its chat is over, not turned into another.
      chatChannel.textContent = "The table is closed: its chat is kept here to read.";
      chatForm.hidden = true;
      quickChat.hidden = true;
      chatSignIn.hidden = true;
      return;
    }
    if (!user) {
      chatChannel.textContent = "";
      return;
    }
    if (seated()) {
      chatChannel.textContent = playing
        ? "Players' chat: spectators' messages are shown after the game."
        : "Players' chat (spectators read it).";
      chatInput.placeholder = "Message to the players";
    } else {
      chatChannel.textContent = playing
        ? "Spectators' chat: the players do not see it during the game."
        : "Spectators' chat.";
      chatInput.placeholder = "Message to the spectators";
    }
  }

  function drawChat() {
    mount(
      chatLog,
      chat.map((m) =>
        h(
          "li",
          { dataset: { channel: m.channel || "" } },
          m.channel
            ? h("span", {
                class: `channel ${m.channel}`,
                text: m.channel === "players" ? "player" : "spectator",
              })
            : null,
          h("span", { class: "who", text: `${m.from ? m.from.name : "?"}: ` }),
          m.text,
        ),
      ),
    );
    chatLog.scrollTop = chatLog.scrollHeight;
  }

  let claimTimer = null;
  function scheduleClaimCheck() {
    clearTimeout(claimTimer);
    if (game && game.claim_after)
      claimTimer = setTimeout(drawActions, Math.max(0, game.claim_after - live.serverNow()) + 100);
  }

  placeControls();
  wide.addEventListener("change", placeControls);
  document.addEventListener("keydown", onKey);
  const stopState = live.onState(() => drawMoveStatus());
  draw();
  const ticker = setInterval(tickClocks, 100);
  const stopWatch = live.watchTable(tableId, onEvent, {
    invite,
    onError: (err) => {
      closedReason =
        err.code === "not_found"
          ? `There is no table ${tableId}, or it is private.`
          : describeError(err);
      draw();
    },
  });
  const stopUser = session.subscribe(() => {
    lastBars = "";
    if (table) draw();
  });
  return () => {
    wide.removeEventListener("change", placeControls);
    document.removeEventListener("keydown", onKey);
    stopState();
    stopLag();
    clearInterval(ticker);
    clearTimeout(claimTimer);
    stopConn();
    // The background watch of the user's games keeps a table with their game in progress
    // followed; any other table is unwatched here (its seat then follows the user out).
    stopWatch();
    stopUser();
  };
}
