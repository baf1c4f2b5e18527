// Hangar's browser client: a lobby, live play and watching, and replays,
// all through the REST/JSON API. The page keeps no game rules: the server
// lists the legal moves (with a preview of each) and the board's geometry.

import * as api from "./api.js";
import * as aeroplane from "./aeroplane.js";
import * as carcassonne from "./carcassonne.js";

const app = document.getElementById("app");

// h builds an HTML element: h("button", {class: "x", onclick: f}, "text").
function h(name, attrs = {}, ...children) {
  const e = document.createElement(name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c !== undefined && c !== null && c !== false) e.append(c);
  }
  return e;
}

const GAMES = {
  GAME_AEROPLANE: "Aeroplane Chess",
  GAME_CARCASSONNE: "Carcassonne",
};
const short = (s, prefix) => (s || "").replace(prefix, "").toLowerCase();

// boards caches GetBoard per game (the same for every match of a game).
const boards = new Map();
async function boardOf(game) {
  if (!boards.has(game)) {
    boards.set(
      game,
      api.getBoard(game).then(
        (r) => r.board.aeroplane || r.board.carcassonne,
        (err) => {
          boards.delete(game);
          throw err;
        },
      ),
    );
  }
  return boards.get(game);
}

// current is the view on screen; leaving it aborts its streams and timers.
let current = { leave() {} };

function setView(v) {
  lastError = "";
  current.leave();
  current = v;
}

function showMe() {
  const p = api.player();
  const me = document.getElementById("me");
  me.replaceChildren();
  if (p) {
    me.append(
      "Playing as ",
      h("strong", { id: "me-name" }, p.displayName),
      " ",
      h("button", { class: "link", id: "logout", onclick: () => { api.forget(); route(); } }, "switch player"),
    );
  }
}

async function route() {
  showMe();
  const hash = location.hash.replace(/^#\/?/, "");
  const [what, id] = hash.split("/");
  if (!api.token()) {
    setView({ leave() {} });
    return signup();
  }
  try {
    if (!api.player()) {
      const r = await api.me();
      localStorage.setItem("hangar.player", JSON.stringify(r.player));
      showMe();
    }
  } catch (err) {
    if (err.httpStatus === 401) {
      api.forget();
      return route();
    }
  }
  if (what === "match" && id) return matchView(decodeURIComponent(id));
  if (what === "replay" && id) return replayView(decodeURIComponent(id));
  return lobby();
}


// lastError is the view's latest error, shown until the next success.
let lastError = "";

function errorBox() {
  return h("p", { class: "error", id: "error", role: "alert" }, lastError);
}

function showError(err) {
  lastError = err ? String(err.message || err) : "";
  const box = document.getElementById("error");
  if (box) box.textContent = lastError;
  if (err) console.error(err);
}

// ---- sign up -------------------------------------------------------------

function signup() {
  const name = h("input", { id: "name", required: true, maxlength: 64, placeholder: "Your name", autofocus: true });
  const form = h(
    "form",
    {
      id: "signup",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          await api.createPlayer(name.value.trim());
          route();
        } catch (err) {
          showError(err);
        }
      },
    },
    h("h1", {}, "Welcome to Hangar"),
    h("p", {}, "Choose a display name to play. Your token stays in this browser."),
    name,
    " ",
    h("button", { id: "create-player", type: "submit" }, "Play"),
    errorBox(),
  );
  app.replaceChildren(form);
  name.focus();
}

// ---- lobby ---------------------------------------------------------------

function lobby() {
  const v = { timer: 0, leave() { clearInterval(this.timer); } };
  setView(v);
  const game = h("select", { id: "game" }, Object.entries(GAMES).map(([k, n]) => h("option", { value: k }, n)));
  const seats = h("input", { id: "seats", type: "number", min: 2, max: 5, value: 2 });
  const bots = h("input", { id: "bots", type: "number", min: 0, max: 4, value: 1 });
  const observe = h("input", { id: "observe", type: "checkbox" });
  const autoRoll = h("input", { id: "auto-roll", type: "checkbox" });
  const create = h(
    "form",
    {
      id: "new-match",
      onsubmit: async (e) => {
        e.preventDefault();
        try {
          const r = await api.createMatch({
            game: game.value,
            seatCount: Number(seats.value),
            botSeats: Number(bots.value),
            observeOnly: observe.checked,
            autoRoll: autoRoll.checked,
          });
          location.hash = "#/match/" + r.match.matchId;
        } catch (err) {
          showError(err);
        }
      },
    },
    h("h2", {}, "New match"),
    h("label", {}, "Game ", game),
    h("label", {}, "Seats ", seats),
    h("label", {}, "Bots ", bots),
    h("label", {}, observe, " watch only"),
    h("label", { title: "Aeroplane Chess: the server rolls each seat's die when its turn comes" }, autoRoll, " server rolls"),
    h("button", { id: "create-match", type: "submit" }, "Create"),
  );
  const watchId = h("input", { id: "watch-id", placeholder: "m_…" });
  const watchForm = h(
    "form",
    { id: "watch-form", onsubmit: (e) => { e.preventDefault(); if (watchId.value.trim()) location.hash = "#/match/" + watchId.value.trim(); } },
    h("h2", {}, "Watch a match"),
    watchId,
    " ",
    h("button", { type: "submit" }, "Watch"),
  );
  const open = h("div", { id: "open-matches" }, "Loading…");
  const mine = h("div", { id: "my-matches" }, "Loading…");
  app.replaceChildren(
    h("div", { class: "lobby" },
      h("section", {}, create, watchForm, errorBox()),
      h("section", {}, h("h2", {}, "Open matches ", h("button", { class: "link", onclick: () => load() }, "refresh")), open,
        h("h2", {}, "My matches"), mine)),
  );
  const me = api.player();
  async function load() {
    try {
      const [o, m] = await Promise.all([api.listMatches("MATCH_FILTER_OPEN"), api.listMatches("MATCH_FILTER_MINE")]);
      open.replaceChildren(matchTable(o.matches || [], me, load));
      mine.replaceChildren(matchTable(m.matches || [], me, load));
    } catch (err) {
      showError(err);
    }
  }
  load();
  v.timer = setInterval(load, 5000);
}

function seatsText(m) {
  return (m.seats || [])
    .map((s) => (s.status === "SEAT_STATUS_EMPTY" ? "—" : s.displayName || "?"))
    .join(", ");
}

function matchTable(matches, me, reload) {
  if (!matches.length) return h("p", { class: "empty" }, "None.");
  const act = (f) => async () => {
    try {
      await f();
      reload();
    } catch (err) {
      showError(err);
    }
  };
  return h(
    "table",
    { class: "matches" },
    h("tr", {}, h("th", {}, "Match"), h("th", {}, "Game"), h("th", {}, "Status"), h("th", {}, "Seats"), h("th", {}, "")),
    matches.map((m) => {
      const seated = (m.seats || []).some((s) => s.playerId === me.playerId);
      const free = (m.seats || []).some((s) => s.status === "SEAT_STATUS_EMPTY");
      const status = short(m.status, "MATCH_STATUS_");
      return h(
        "tr",
        { dataset: { match: m.matchId, status } },
        h("td", {}, h("a", { href: "#/match/" + m.matchId }, m.matchId)),
        h("td", {}, GAMES[m.game] || m.game),
        h("td", {}, status),
        h("td", {}, seatsText(m)),
        h(
          "td",
          { class: "actions" },
          m.status === "MATCH_STATUS_OPEN" && !seated && free &&
            h("button", { class: "join", onclick: act(async () => { await api.joinMatch(m.matchId); location.hash = "#/match/" + m.matchId; }) }, "Join"),
          m.status === "MATCH_STATUS_OPEN" && m.creatorId === me.playerId &&
            h("button", { class: "start", onclick: act(() => api.startMatch(m.matchId)) }, "Start"),
          h("a", { href: "#/match/" + m.matchId, class: "button" }, m.status === "MATCH_STATUS_ACTIVE" && seated ? "Play" : "Watch"),
          m.status === "MATCH_STATUS_FINISHED" && h("a", { href: "#/replay/" + m.matchId, class: "button" }, "Replay"),
        ),
      );
    }),
  );
}

// ---- events --------------------------------------------------------------

// describeEvent is one line of the event log.
export function describeEvent(ev, m) {
  const name = (seat) => {
    const s = m && (m.seats || []).find((x) => x.seat === seat);
    return s && s.displayName ? `${s.displayName} (seat ${seat})` : `seat ${seat}`;
  };
  if (ev.aeroplane) return ev.aeroplane.notation;
  if (ev.carcassonne) return ev.carcassonne.notation;
  if (ev.matchCreated) return `created: ${GAMES[ev.matchCreated.game] || ev.matchCreated.game}, ${ev.matchCreated.seatCount} seats`;
  if (ev.playerJoined) return `seat ${ev.playerJoined.seat}: ${ev.playerJoined.bot ? "a bot" : ev.playerJoined.displayName} joined`;
  if (ev.playerLeft) return `seat ${ev.playerLeft.seat} left${ev.playerLeft.forfeited ? " (forfeited)" : ""}`;
  if (ev.matchStarted) return `started: seats ${(ev.matchStarted.seats || []).join(", ")}`;
  if (ev.matchEnded) return `ended: ${(ev.matchEnded.ranking || []).map((s, i) => `${i + 1}. ${name(s)}`).join(", ")}`;
  if (ev.turnTimedOut) return `seat ${ev.turnTimedOut.seat} timed out`;
  if (ev.seatHandedToBot) return `seat ${ev.seatHandedToBot.seat} handed to a bot`;
  return "event";
}

function logItem(ev, m) {
  return h("li", { dataset: { seq: ev.seq } }, h("span", { class: "seq" }, ev.seq), " ", describeEvent(ev, m));
}

// ---- a match: play or watch ------------------------------------------------

function mySeat(m) {
  const me = api.player();
  const s = me && (m.seats || []).find((x) => x.playerId === me.playerId && x.status === "SEAT_STATUS_PLAYER");
  return s ? s.seat : -1;
}

function seatList(m, board, turnSeat) {
  const colour = (seat) => (m.game === "GAME_AEROPLANE" ? aeroplane.seatColour(board, seat) : carcassonne.seatColour(seat));
  const carc = m.state && m.state.carcassonne;
  return h(
    "ul",
    { class: "seats", id: "seats" },
    (m.seats || []).map((s) =>
      h(
        "li",
        { class: s.seat === turnSeat && m.status === "MATCH_STATUS_ACTIVE" ? "turn" : "", dataset: { seat: s.seat } },
        h("span", { class: "swatch", style: `background:${colour(s.seat)}` }),
        ` ${s.seat}: ${s.status === "SEAT_STATUS_EMPTY" ? "(empty)" : s.displayName}`,
        s.status === "SEAT_STATUS_BOT" ? " (bot)" : "",
        s.status === "SEAT_STATUS_FORFEITED" ? " (forfeited)" : "",
        carc ? ` — ${carc.scores[s.seat] ?? 0} pts, ${carc.supply[s.seat] ?? 0} followers` : "",
        s.place ? ` — place ${s.place}` : "",
      ),
    ),
  );
}

// drawState draws any game's state into the board svg.
function drawState(svg, m, board, hl) {
  const st = m.state || {};
  if (m.game === "GAME_AEROPLANE" && st.aeroplane) {
    if (board) aeroplane.draw(svg, board, st.aeroplane, hl);
    else svg.replaceChildren();
  } else if (m.game === "GAME_CARCASSONNE" && st.carcassonne) {
    carcassonne.draw(svg, st.carcassonne, hl);
  } else {
    svg.replaceChildren();
  }
  svg.dataset.version = m.version;
}

function matchView(id) {
  const v = {
    id,
    match: null,
    legal: null,
    board: null,
    busy: false,
    hl: null,
    abort: new AbortController(),
    seqs: new Set(),
    refreshing: null,
    again: false,
    leave() {
      this.abort.abort();
    },
  };
  setView(v);
  const svg = aeroplane.el("svg", { id: "board", class: "board", role: "img" });
  const panel = h("div", { class: "panel", id: "panel" });
  const log = h("ol", { id: "log", class: "log" });
  const side = h("div", { class: "side" }, panel, h("h3", {}, "Events"), log);
  app.replaceChildren(h("div", { class: "match", id: "match" }, h("div", { class: "board-wrap" }, svg), side));

  const ui = () => {
    const m = v.match;
    if (!m) return "loading";
    if (v.busy) return "busy";
    if (m.status === "MATCH_STATUS_OPEN") return "open";
    if (m.status !== "MATCH_STATUS_ACTIVE") return "over";
    if (!v.legal) return "watch";
    if ((v.legal.moves || []).length) return "move";
    if (v.legal.emptyReason === "EMPTY_REASON_ROLL_FIRST") return "roll";
    return "wait";
  };

  const act = (f) => async () => {
    if (v.busy) return;
    v.busy = true;
    render();
    try {
      await f();
      lastError = "";
    } catch (err) {
      showError(err);
    }
    try {
      await refresh();
    } finally {
      v.busy = false;
      render();
    }
  };

  const play = (mv) =>
    act(async () => {
      const g = v.match.game === "GAME_AEROPLANE" ? "aeroplane" : "carcassonne";
      await api.move(id, v.legal.version, { [g]: { notation: mv.notation } });
      v.hl = null;
    });

  function movesOf() {
    return (v.legal && v.legal.moves) || [];
  }

  function render() {
    const m = v.match;
    if (!m) return;
    const state = ui();
    const root = document.getElementById("match");
    if (!root) return;
    // Rebuild only what changed: a button replaced under the pointer
    // would swallow a click.
    const key = JSON.stringify([m.version, m.status, state, v.legal && v.legal.version, lastError, !!v.board]);
    if (key === v.rendered) return;
    v.rendered = key;
    root.dataset.ui = state;
    root.dataset.version = m.version;
    root.dataset.status = short(m.status, "MATCH_STATUS_");
    const seat = mySeat(m);
    const st = (m.state && (m.state.aeroplane || m.state.carcassonne)) || {};
    const turnSeat = m.status === "MATCH_STATUS_ACTIVE" ? m.turnSeat : -1;
    drawState(svg, m, v.board, v.hl);

    const moves = movesOf();
    const isAero = m.game === "GAME_AEROPLANE";
    const header = h(
      "div",
      {},
      h("h2", {}, GAMES[m.game] || m.game, " ", h("small", {}, m.matchId)),
      h("p", { id: "status", dataset: { status: short(m.status, "MATCH_STATUS_") } },
        m.status === "MATCH_STATUS_FINISHED" ? "Finished" : short(m.status, "MATCH_STATUS_"),
        ` · version ${m.version}`,
        m.status === "MATCH_STATUS_ACTIVE" ? ` · phase ${short(st.phase, "PHASE_")}` : "",
        seat < 0 ? " · watching" : ` · you are seat ${seat}`),
      seatList(m, v.board, turnSeat),
    );
    const controls = h("div", { class: "controls" });
    if (m.status === "MATCH_STATUS_OPEN") {
      const me = api.player();
      if (seat < 0 && (m.seats || []).some((s) => s.status === "SEAT_STATUS_EMPTY"))
        controls.append(h("button", { id: "join", onclick: act(() => api.joinMatch(id)) }, "Join"));
      if (m.creatorId === me.playerId)
        controls.append(h("button", { id: "start", onclick: act(() => api.startMatch(id)) }, "Start"));
      if (seat >= 0) controls.append(h("button", { id: "leave", onclick: act(() => api.leaveMatch(id)) }, "Leave"));
      controls.append(h("p", {}, "Waiting for players. The match starts when its seats are full, or when its creator starts it."));
    }
    if (m.status === "MATCH_STATUS_ACTIVE" && isAero) {
      controls.append(
        h("div", { class: "dice" },
          h("span", { id: "die", class: "die", dataset: { die: st.die || 0 } }, st.die ? "⚀⚁⚂⚃⚄⚅"[st.die - 1] : "·"),
          h("button", { id: "roll", disabled: state !== "roll", onclick: act(() => api.roll(id, v.legal.version)) }, "Roll")),
      );
    }
    if (m.status === "MATCH_STATUS_ACTIVE" && seat >= 0) {
      controls.append(
        h("p", { id: "prompt" },
          { roll: "Your turn: roll the die.", move: "Choose a move (hover to see it on the board).", wait: "Waiting for the other seats…", busy: "…" }[state] || ""),
      );
    }
    if (moves.length) {
      controls.append(
        h("ul", { id: "moves", class: "moves" },
          moves.map((gm, i) => {
            const mv = gm.aeroplane || gm.carcassonne;
            const text = isAero ? aeroplane.describe(mv) : mv.notation;
            const hl = isAero ? { seat, preview: mv.preview, planes: [mv.plane] } : { move: mv };
            return h("li", {},
              h("button", {
                class: "move",
                dataset: { notation: mv.notation, index: i },
                disabled: state !== "move",
                onclick: play(mv),
                onmouseenter: () => { v.hl = hl; drawState(svg, m, v.board, v.hl); },
                onfocus: () => { v.hl = hl; drawState(svg, m, v.board, v.hl); },
                onmouseleave: () => { v.hl = null; drawState(svg, m, v.board, v.hl); },
              }, text));
          })),
      );
    }
    if (m.status === "MATCH_STATUS_ACTIVE" && seat >= 0) {
      controls.append(
        h("button", {
          id: "resign",
          class: "link",
          onclick: () => {
            if (confirm("Resign? A bot plays your seat to the end, and you are ranked last.")) act(() => api.leaveMatch(id))();
          },
        }, "resign"),
      );
    }
    if (m.status === "MATCH_STATUS_FINISHED" || m.status === "MATCH_STATUS_ABANDONED") {
      controls.append(h("p", { id: "result" }, resultText(m)), h("a", { href: "#/replay/" + id, class: "button", id: "to-replay" }, "Replay it"));
    }
    if (m.game === "GAME_CARCASSONNE") controls.append(carcassonne.panel(st));
    panel.replaceChildren(header, controls, errorBox());
  }

  // A click on a plane plays its move when it has exactly one.
  svg.addEventListener("click", (e) => {
    const g = e.target.closest(".plane");
    if (!g || ui() !== "move") return;
    const mine = movesOf()
      .map((gm) => gm.aeroplane)
      .filter((mv) => mv && String(mv.plane) === g.dataset.index && (mv.preview ? mv.preview.planes.some((p) => String(p.seat) === g.dataset.seat) : String(mySeat(v.match)) === g.dataset.seat));
    if (mine.length === 1) play(mine[0])();
  });

  // refresh reads the match (and the caller's legal moves) again; calls
  // made while one runs join it and make it read once more.
  function refresh() {
    if (v.refreshing) {
      v.again = true;
      return v.refreshing;
    }
    v.refreshing = (async () => {
      try {
        for (let i = 0; i < 10; i++) {
          v.again = false;
          const m = (await api.getMatch(id)).match;
          let legal = null;
          if (mySeat(m) >= 0 && m.status === "MATCH_STATUS_ACTIVE") {
            legal = await api.legalMoves(id);
            if (legal.version !== m.version) v.again = true;
          }
          if (!v.board && m.game === "GAME_AEROPLANE") {
            v.board = await boardOf(m.game).catch((err) => {
              showError(new Error("the board could not be read (GetBoard): " + err.message));
              return null;
            });
          }
          v.match = m;
          v.legal = legal;
          if (!v.again) break;
        }
      } catch (err) {
        showError(err);
      } finally {
        v.refreshing = null;
      }
      if (!v.busy) render();
    })();
    return v.refreshing;
  }

  refresh().then(() => {
    api
      .watch(id, 0, (msg) => {
        if (!v.seqs.has(msg.event.seq)) {
          v.seqs.add(msg.event.seq);
          log.append(logItem(msg.event, v.match));
          log.scrollTop = log.scrollHeight;
        }
        // Stored events the state already includes need no read.
        if (!v.match || Number(msg.version) > Number(v.match.version)) refresh();
      }, v.abort.signal)
      .then(() => refresh())
      .catch(showError);
  });
}

function resultText(m) {
  if (m.status === "MATCH_STATUS_ABANDONED") return "Abandoned.";
  const ranked = (m.seats || []).filter((s) => s.place).sort((a, b) => a.place - b.place);
  return "Finished: " + ranked.map((s) => `${s.place}. ${s.displayName || "seat " + s.seat}`).join(", ");
}

// ---- replay ----------------------------------------------------------------

async function replayView(id) {
  const v = { timer: 0, seq: 0, leave() { clearInterval(this.timer); } };
  setView(v);
  app.replaceChildren(h("p", {}, "Loading…"));
  let m;
  let events;
  let board = null;
  try {
    [m, events] = await Promise.all([api.getMatch(id).then((r) => r.match), api.listEvents(id)]);
    if (m.game === "GAME_AEROPLANE") board = await boardOf(m.game);
  } catch (err) {
    app.replaceChildren(h("p", { class: "error" }, String(err.message || err)));
    return;
  }
  if (current !== v) return;
  const max = Number(m.version);
  const svg = aeroplane.el("svg", { id: "board", class: "board", role: "img" });
  const slider = h("input", { id: "slider", type: "range", min: 1, max, value: max, step: 1 });
  const label = h("span", { id: "at" });
  const info = h("div", { id: "replay-info" });
  const log = h("ol", { id: "log", class: "log" }, events.map((ev) => logItem(ev, m)));
  const stepTo = (n) => {
    slider.value = Math.max(1, Math.min(max, n));
    show(Number(slider.value));
  };
  const playBtn = h("button", {
    id: "play",
    onclick: () => {
      if (v.timer) {
        clearInterval(v.timer);
        v.timer = 0;
        playBtn.textContent = "▶ Play";
        return;
      }
      if (Number(slider.value) >= max) stepTo(1);
      playBtn.textContent = "❚❚ Pause";
      v.timer = setInterval(() => {
        if (Number(slider.value) >= max) {
          clearInterval(v.timer);
          v.timer = 0;
          playBtn.textContent = "▶ Play";
          return;
        }
        stepTo(Number(slider.value) + 1);
      }, 400);
    },
  }, "▶ Play");
  app.replaceChildren(
    h("div", { class: "match replay", id: "replay" },
      h("div", { class: "board-wrap" }, svg),
      h("div", { class: "side" },
        h("h2", {}, "Replay: ", GAMES[m.game] || m.game, " ", h("small", {}, id)),
        h("p", {}, resultText(m), " ", h("a", { href: "#/match/" + id }, "live view")),
        h("div", { class: "scrub" },
          h("button", { id: "prev", onclick: () => stepTo(Number(slider.value) - 1) }, "◀"),
          slider,
          h("button", { id: "next", onclick: () => stepTo(Number(slider.value) + 1) }, "▶"),
          playBtn),
        h("p", {}, "After event ", label, ` of ${max}`),
        info,
        errorBox(),
        h("h3", {}, "Events"),
        log)),
  );
  let want = 0;
  async function show(n) {
    want = n;
    label.textContent = n;
    try {
      const at = (await api.getMatch(id, n)).match;
      if (want !== n || current !== v) return; // a later position was asked for meanwhile
      drawState(svg, at, board, null);
      const ev = events[n - 1];
      const st = (at.state && (at.state.aeroplane || at.state.carcassonne)) || null;
      info.replaceChildren(
        h("p", { id: "replay-event" }, ev ? describeEvent(ev, m) : ""),
        seatList(at, board, at.status === "MATCH_STATUS_ACTIVE" ? at.turnSeat : -1),
        st ? h("pre", { id: "notation" }, st.notation) : h("p", {}, "Before the start: no board yet."),
      );
      if (at.game === "GAME_CARCASSONNE" && st) info.append(carcassonne.panel(st));
      for (const li of log.children) li.classList.toggle("current", li.dataset.seq === String(n));
      const cur = log.querySelector(".current");
      // Scroll the log only (scrollIntoView would scroll the page too).
      if (cur) log.scrollTop = cur.offsetTop - log.clientHeight / 2;
      document.getElementById("replay").dataset.version = n;
    } catch (err) {
      showError(err);
    }
  }
  slider.addEventListener("input", () => show(Number(slider.value)));
  log.addEventListener("click", (e) => {
    const li = e.target.closest("li");
    if (li) stepTo(Number(li.dataset.seq));
  });
  show(max);
}

window.addEventListener("hashchange", route);
route();
