// Hangar's web client: sign-in, a lobby, matches played by clicking the
// board, replays, leaderboards and players' pages, all through the
// TypeScript SDK (sdk/typescript) over Connect. The page keeps no game
// rules: the server lists the legal actions and the board's geometry.

import type { Message } from "@bufbuild/protobuf";
import type { Any } from "@bufbuild/protobuf/wkt";
import { createConnectTransport } from "@connectrpc/connect-web";
import {
  aeroplane as ap,
  carcassonne as cc,
  Code,
  createHangarClient,
  gameEvent,
  HangarError,
  newRequestId,
  pack,
  unpack,
  unpackAs,
  v1,
  type Session,
  type Token,
} from "../../../sdk/typescript/src/index.js";
import * as aero from "./aeroplane.js";
import * as carc from "./carcassonne.js";
import { chatPanel } from "./chat.js";
import { calendarCard } from "./calendar.js";
import { noticesCard } from "./notices.js";
import * as clock from "./clock.js";
import { friendsView, relationButtons, social } from "./friends.js";
import { h } from "./dom.js";
import { describe, offerKind, seatName, type Context } from "./events.js";
import { say, sentence } from "./phrase.js";

const hangar = createHangarClient({ baseUrl: location.origin, transport: createConnectTransport });
const app = document.getElementById("app")!;
const KEY = "hangar.session";

// ---- the session -------------------------------------------------------------

let session: Session | undefined;
let me: v1.Player | undefined;

function keep(t: Token): void {
  localStorage.setItem(KEY, JSON.stringify({ token: t.token, expireTime: t.expireTime.toISOString() }));
}

function resume(): Session | undefined {
  const raw = localStorage.getItem(KEY);
  if (!raw) return undefined;
  try {
    const t = JSON.parse(raw) as { token: string; expireTime: string };
    const expireTime = new Date(t.expireTime);
    if (!(expireTime.getTime() > Date.now())) return undefined;
    return hangar.resume({ token: t.token, expireTime }, { onToken: keep });
  } catch {
    return undefined;
  }
}

function signOut(): void {
  session?.close();
  session = undefined;
  me = undefined;
  localStorage.removeItem(KEY);
  location.hash = "#/";
  route();
}

// ---- games -------------------------------------------------------------------

type Kind = "aeroplane" | "carcassonne" | "other";
let games: Map<string, v1.GameInfo> | undefined;
async function loadGames(): Promise<Map<string, v1.GameInfo>> {
  games ??= new Map((await hangar.listGames()).map((g) => [g.name, g]));
  return games;
}
// ?generic=1 shows every game in the generic view (state and events as
// JSON, the legal actions as buttons), as for a game the page does not draw.
const generic = new URLSearchParams(location.search).get("generic") === "1";
const kindOf = (game: string): Kind => {
  if (generic) return "other";
  const t = games?.get(game)?.stateType;
  return t === "hangar.aeroplane.v1.State" ? "aeroplane" : t === "hangar.carcassonne.v1.State" ? "carcassonne" : "other";
};
const titleOf = (game: string) => games?.get(game)?.title || game;
let apBoard: Promise<ap.Board | undefined> | undefined;
const aeroplaneBoard = (game: string) => (apBoard ??= hangar.board(game).then((b) => b as ap.Board | undefined));

const STATUS: Record<number, string> = { 1: "open", 2: "live", 3: "finished", 4: "abandoned" };
const statusName = (st: v1.MatchStatus) => STATUS[st] ?? "unknown";

// nameOf is a player's display name, asked of the server once per page load.
const names = new Map<string, Promise<string>>();
function nameOf(id: string): Promise<string> {
  let n = names.get(id);
  if (!n) {
    n = session!.players.getPlayer({ playerId: id }).then((r) => r.player?.displayName || "a player", () => "a player");
    names.set(id, n);
  }
  return n;
}

// ---- views -------------------------------------------------------------------

let leave: () => void = () => {};
function setView(f: () => void = () => {}): void {
  leave();
  leave = f;
}

function errorText(err: unknown): string {
  const e = HangarError.from(err);
  if (e.code === Code.Unavailable || e.code === Code.Unknown) return "The server cannot be reached. Check the connection and try again.";
  return e.rawMessage || e.message;
}

function showError(err: unknown): void {
  const box = document.getElementById("error");
  if (box) box.textContent = err ? errorText(err) : "";
  if (err) console.error(err);
}
const errorBox = () => h("p", { id: "error", class: "error", role: "alert" });

function header(): void {
  const nav = document.getElementById("nav")!;
  nav.replaceChildren();
  if (me) {
    nav.append(
      h("a", { href: "#/leaders", class: "navlink" }, "Leaderboards"),
      h("a", { href: "#/friends", class: "navlink", id: "nav-friends" }, "Friends"),
      h("a", { href: `#/player/${me.playerId}`, class: "navlink", id: "me" }, me.displayName),
      h("button", { class: "link", id: "logout", onclick: signOut }, "Sign out"),
    );
  }
}

async function route(): Promise<void> {
  session ??= resume();
  const [what, id, code] = location.hash.replace(/^#\/?/, "").split("/");
  if (!session) {
    setView();
    header();
    return signIn();
  }
  if (!me) {
    try {
      me = await session.player();
    } catch (err) {
      if (HangarError.from(err).code === Code.Unauthenticated) return signOut();
      setView();
      app.replaceChildren(h("p", { class: "error", role: "alert" }, errorText(err)));
      return;
    }
  }
  header();
  await loadGames().catch(showError);
  const arg = decodeURIComponent(id ?? "");
  if (what === "join" && arg && code) return joinByLink(arg, decodeURIComponent(code));
  if (what === "match" && arg) return matchView(arg, false);
  if (what === "replay" && arg) return matchView(arg, true);
  if (what === "player" && arg) return playerView(arg);
  if (what === "leaders") return leadersView(arg);
  if (what === "friends") return friendsPage();
  return lobby();
}

// ---- sign-in -------------------------------------------------------------------

function signIn(): void {
  const name = h("input", { id: "name", name: "name", required: true, maxlength: 64, autocomplete: "nickname" });
  app.replaceChildren(
    h("form", {
      id: "signup", class: "card narrow",
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          session = await hangar.createPlayer(name.value.trim(), { onToken: keep });
          keep(session.token);
          me = await session.player();
          route();
        } catch (err) {
          showError(err);
        }
      },
    },
    h("h1", {}, "Welcome to Hangar"),
    h("p", {}, "Play Aeroplane Chess and Carcassonne against friends or bots. Choose a name to start: no password, and this browser remembers you."),
    h("label", { for: "name" }, "Your name"),
    name,
    h("button", { id: "create-player", type: "submit", class: "primary" }, "Play"),
    errorBox()),
  );
  name.focus();
}

// ---- lobby -----------------------------------------------------------------------

function mySeat(m: v1.Match): number {
  const s = m.seats.find((x) => x.playerId === me?.playerId && x.status === v1.SeatStatus.PLAYER);
  return s ? s.seat : -1;
}
const myTurn = (m: v1.Match) => m.status === v1.MatchStatus.ACTIVE && mySeat(m) >= 0 && m.turnSeat === mySeat(m);
const players = (m: v1.Match) => m.seats.map((x) => (x.status === v1.SeatStatus.EMPTY ? "empty seat" : x.status === v1.SeatStatus.BOT ? `${x.displayName || "bot"} (bot)` : x.displayName)).join(", ");

async function createMatch(game: string, bots: number, seats: number, autoRoll: boolean, priv = false, timeControl?: v1.TimeControl): Promise<void> {
  const aeroplane = games?.get(game)?.stateType === "hangar.aeroplane.v1.State";
  const r = await session!.matches.createMatch({
    game,
    seatCount: seats,
    botSeats: bots,
    private: priv,
    timeControl,
    options: aeroplane ? pack(ap.OptionsSchema, { autoRoll }) : undefined,
  });
  location.hash = `#/match/${r.match!.matchId}`;
}

function lobby(): void {
  let timer = 0;
  const stop = new AbortController();
  setView(() => {
    clearInterval(timer);
    stop.abort();
  });
  const list = [...(games?.values() ?? [])];
  const quick = h("div", { class: "quick" },
    list.map((g) => h("button", {
      class: "primary big", "data-game": g.name, id: `quick-${g.name}`,
      onclick: () => createMatch(g.name, 1, 2, true).catch(showError),
    }, `Play ${g.title || g.name} against a bot`)));
  const game = h("select", { id: "game" }, list.map((g) => h("option", { value: g.name }, g.title || g.name)));
  const seats = h("select", { id: "seats" }, [2, 3, 4].map((n) => h("option", { value: n }, `${n} players`)));
  const bots = h("select", { id: "bots" }, [0, 1, 2, 3].map((n) => h("option", { value: n, selected: n === 1 }, n === 0 ? "no bots: wait for people" : `${n} bot${n > 1 ? "s" : ""}`)));
  const autoRoll = h("input", { id: "auto-roll", type: "checkbox", checked: true });
  const autoRollLabel = h("label", { class: "check" }, autoRoll, " The server rolls my die");
  const priv = h("input", { id: "private", type: "checkbox" });
  const privLabel = h("label", { class: "check" }, priv, " Private: only players with my invite link can join");
  // The clock: none, per move, a bank with an increment, or a bank.
  const clockKind = h("select", { id: "clock" },
    h("option", { value: "none" }, "No clock"),
    h("option", { value: "per-move" }, "Time per move"),
    h("option", { value: "increment" }, "A bank, plus time per move (Fischer)"),
    h("option", { value: "bank" }, "A bank for the whole match"));
  const minutes = h("input", { id: "clock-minutes", type: "number", min: 1, max: 43200, step: 1, value: 1440, inputmode: "numeric" });
  const increment = h("input", { id: "clock-increment", type: "number", min: 0, max: 86400, step: 1, value: 30, inputmode: "numeric" });
  const policy = h("select", { id: "timeout-policy" },
    h("option", { value: v1.TimeoutPolicy.SKIP }, "The server plays the turn"),
    h("option", { value: v1.TimeoutPolicy.LOSE }, "The seat loses"),
    h("option", { value: v1.TimeoutPolicy.BOT }, "A bot takes the seat"),
    h("option", { value: v1.TimeoutPolicy.ABORT_IF_UNSTARTED }, "Abort if no move yet, else lose"));
  const minutesLabel = h("label", { for: "clock-minutes" }, "Minutes");
  const weekends = h("input", { id: "pause-weekends", type: "checkbox" });
  const weekendsLabel = h("label", { class: "check", id: "pause-weekends-field" }, weekends, " Pause on weekends (Saturday and Sunday in each player's time zone)");
  const reminders = h("select", { id: "reminders" }, clock.REMINDERS.map(([v, text]) => h("option", { value: v }, text)));
  const clockFields = h("div", { id: "clock-fields" },
    minutesLabel, minutes,
    h("div", { id: "increment-field" }, h("label", { for: "clock-increment" }, "Seconds added after each move"), increment),
    h("label", { for: "timeout-policy" }, "When time runs out"), policy,
    weekendsLabel,
    h("label", { for: "reminders" }, "Remind the player to move"), reminders);
  const sync = () => {
    autoRollLabel.hidden = games?.get(game.value)?.stateType !== "hangar.aeroplane.v1.State";
    clockFields.hidden = clockKind.value === "none";
    weekendsLabel.hidden = !clock.correspondence(clockKind.value as clock.Choice["kind"], Number(minutes.value));
    minutesLabel.textContent = clockKind.value === "per-move" ? "Minutes per move (1440: a day)" : "Minutes in the bank";
    (clockFields.querySelector("#increment-field") as HTMLElement).hidden = clockKind.value !== "increment";
  };
  game.addEventListener("change", sync);
  clockKind.addEventListener("change", sync);
  minutes.addEventListener("input", sync);
  minutes.addEventListener("change", sync);
  sync();
  const form = h("form", {
    id: "new-match", class: "card",
    onsubmit: (e: Event) => {
      e.preventDefault();
      const tc = clock.timeControl({ kind: clockKind.value as clock.Choice["kind"], minutes: Number(minutes.value), incrementSeconds: Number(increment.value), policy: Number(policy.value), pauseWeekends: weekends.checked, reminders: reminders.value });
      createMatch(game.value, Number(bots.value), Number(seats.value), autoRoll.checked, priv.checked, tc).catch(showError);
    },
  },
  h("h2", {}, "New match"),
  h("label", { for: "game" }, "Game"), game,
  h("label", { for: "seats" }, "Players"), seats,
  h("label", { for: "bots" }, "Bots"), bots,
  autoRollLabel,
  privLabel,
  h("label", { for: "clock" }, "Clock"), clockKind,
  clockFields,
  h("button", { id: "create-match", type: "submit" }, "Create match"));

  const live = h("div", { id: "live" }, h("p", { class: "empty" }, "Loading…"));
  const open = h("div", { id: "open" }, h("p", { class: "empty" }, "Loading…"));
  const done = h("div", { id: "finished" }, h("p", { class: "empty" }, "Loading…"));
  app.replaceChildren(h("div", { class: "lobby" },
    h("section", { class: "card", "aria-labelledby": "h-play" }, h("h1", { id: "h-play" }, "Play now"), quick, errorBox()),
    h("section", { class: "card", "aria-labelledby": "h-live" }, h("h2", { id: "h-live" }, "Your live matches"), live),
    noticesCard({ session: session!, titleOf, nameOf, errorText, signal: stop.signal }),
    h("section", { class: "card", "aria-labelledby": "h-open" }, h("h2", { id: "h-open" }, "Open matches"), open),
    h("section", { class: "card", "aria-labelledby": "h-fin" }, h("h2", { id: "h-fin" }, "Finished matches"), done),
    form,
    h("section", { class: "card" }, h("h2", {}, "Leaderboards"),
      h("ul", { class: "plain" }, list.map((g) => h("li", {}, h("a", { href: `#/leaders/${g.name}` }, g.title || g.name)))))));

  const row = (m: v1.Match, extra: Node[]) =>
    h("li", { class: "match-row" + (myTurn(m) ? " your-turn" : ""), "data-match": m.matchId, "data-status": statusName(m.status) },
      h("a", { href: `#/match/${m.matchId}`, class: "row-main" },
        h("strong", {}, titleOf(m.game)), " ",
        myTurn(m) ? h("span", { class: "badge turn" }, "Your turn") : m.status === v1.MatchStatus.OPEN ? h("span", { class: "badge" }, "Waiting for players") : null,
        m.private ? h("span", { class: "badge private" }, "Private") : null,
        h("span", { class: "who" }, players(m))),
      ...extra);
  async function load(): Promise<void> {
    try {
      const [mine, lobbies, ended] = await Promise.all([
        session!.matches.listMatches({ filter: v1.MatchFilter.MINE, pageSize: 50 }),
        session!.matches.listMatches({ filter: v1.MatchFilter.OPEN, pageSize: 50 }),
        session!.history.listPlayerMatches({ pageSize: 20 }),
      ]);
      const active = mine.matches.filter((m) => m.status === v1.MatchStatus.ACTIVE || m.status === v1.MatchStatus.OPEN);
      active.sort((a, b) => Number(myTurn(b)) - Number(myTurn(a)));
      live.replaceChildren(active.length
        ? h("ul", { class: "matches" }, active.map((m) => row(m, [h("a", { class: "button", href: `#/match/${m.matchId}` }, myTurn(m) ? "Play" : "Open")])))
        : h("p", { class: "empty" }, "None yet: start one above."));
      const joinable = lobbies.matches.filter((m) => mySeat(m) < 0);
      open.replaceChildren(joinable.length
        ? h("ul", { class: "matches" }, joinable.map((m) => row(m, [h("button", {
          class: "join", onclick: async () => {
            try {
              await session!.matches.joinMatch({ matchId: m.matchId, expectedVersion: m.version });
              location.hash = `#/match/${m.matchId}`;
            } catch (err) {
              showError(err);
            }
          },
        }, "Join")])))
        : h("p", { class: "empty" }, "No one is waiting for players."));
      done.replaceChildren(ended.matches.length
        ? h("ul", { class: "matches" }, ended.matches.map((pm) => row(pm.match!, [
          h("span", { class: "result" }, pm.place ? `${ordinal(pm.place)} place` : ""),
          h("a", { class: "button replay", href: `#/replay/${pm.match!.matchId}` }, "Replay"),
        ])))
        : h("p", { class: "empty" }, "Finished matches show here, each with its replay."));
    } catch (err) {
      showError(err);
    }
  }
  load();
  timer = window.setInterval(load, 5000);
}

const ordinal = (n: number) => n + (["th", "st", "nd", "rd"][n % 100 >> 3 ^ 1 && n % 10] || "th");

// joinByLink takes a seat in the match of an invite link (#/join/<match>/<code>)
// and opens it; a player already seated there just opens it.
async function joinByLink(id: string, code: string): Promise<void> {
  setView();
  app.replaceChildren(h("section", { class: "card narrow", id: "joining" }, h("h1", {}, "Joining the match…"), errorBox()));
  try {
    await session!.matches.joinMatch({ matchId: id, inviteCode: code });
  } catch (err) {
    const m = await session!.matches.getMatch({ matchId: id }).then((r) => r.match).catch(() => undefined);
    if (!m || mySeat(m) < 0) return showError(err);
  }
  location.replace(`#/match/${encodeURIComponent(id)}`);
}

// inviteLink is the link that lets anyone holding it join private match
// id: made once by CreateInviteCode (the server keeps only the code's
// hash), then kept in this browser so its creator can show it again.
async function inviteLink(id: string): Promise<string> {
  const key = `hangar.invite.${id}`;
  let code = localStorage.getItem(key);
  if (!code) {
    code = (await session!.matches.createInviteCode({ matchId: id })).code;
    localStorage.setItem(key, code);
  }
  return `${location.origin}${location.pathname}${location.search}#/join/${encodeURIComponent(id)}/${encodeURIComponent(code)}`;
}

// ---- a match: play, watch or replay -------------------------------------------------

interface Legal {
  version: bigint;
  anys: Any[];
  msgs: (Message | undefined)[];
}

function matchView(id: string, replay: boolean): void {
  const abort = new AbortController();
  let timer = 0;
  let clockTimer = 0;
  let pollTimer = 0;
  setView(() => {
    abort.abort();
    clearInterval(timer);
    clearInterval(clockTimer);
    clearInterval(pollTimer);
    document.removeEventListener("keydown", onKey);
  });
  let match: v1.Match | undefined;
  let legal: Legal | undefined;
  let kind: Kind = "other";
  let ctx: Context = { kind, title: "", offers: new Map() };
  let offerNote = ""; // the latest offer's outcome, in words
  let apView: aero.Board | undefined;
  const carcSvg = h("div").ownerDocument.createElementNS("http://www.w3.org/2000/svg", "svg") as SVGSVGElement;
  carcSvg.id = "board";
  carcSvg.setAttribute("class", "board carcassonne");
  carcSvg.setAttribute("role", "group");
  carcSvg.setAttribute("aria-label", "The Carcassonne board");
  let busy = false;
  let chosenPlane: number | undefined;
  let preview: ap.Move | undefined;
  let cell: [number, number] | undefined;
  let rotation: number | undefined;
  const events: v1.Event[] = [];
  let at = 0; // the replay's version
  let lastShown = "";
  let moved: ap.PlaneRef[] = []; // the planes the last Aeroplane move moved
  const paths = new Map<string, aero.Flight>(); // the squares planes moved over, not yet drawn
  const die = new RollingDie();
  const dieLabel = h("span", { class: "die-label" });
  const diceBox = h("div", { class: "dice" }, die.button, dieLabel);

  const boardWrap = h("div", { class: "board-wrap" });
  const turn = h("div", { id: "turn", class: "turn-bar", "aria-live": "polite" });
  const controls = h("div", { id: "controls", class: "controls" });
  const seatsEl = h("ul", { id: "seats", class: "seats" });
  const log = h("ol", { id: "log", class: "log", "aria-label": "What happened", tabindex: 0 });
  const clockLine = h("p", { id: "clock-line", class: "small" });
  const chatBox = h("div", { class: "chat-box" });
  const root = h("div", { id: replay ? "replay" : "match", class: "match", "data-ui": "loading" },
    h("div", { class: "main" }, turn, boardWrap),
    h("div", { class: "side" }, controls, errorBox(), h("h2", { class: "small" }, "Players"), seatsEl, clockLine, chatBox, h("h2", { class: "small" }, "What happened"), log));
  app.replaceChildren(root);

  const game = () => (match ? unpack(match.state) : undefined);
  const apState = () => (match ? unpackAs(match.state, ap.StateSchema) : undefined);
  const ccState = () => (match ? unpackAs(match.state, cc.StateSchema) : undefined);
  const of = <T extends Message>(name: string) => (legal?.msgs ?? []).map((m, i) => ({ m: m as T, i })).filter((x) => x.m?.$typeName === name);
  const apMoves = () => of<ap.Move>("hangar.aeroplane.v1.Move");
  const ccMoves = () => of<cc.Move>("hangar.carcassonne.v1.Move");
  const rolls = () => of<ap.Roll>("hangar.aeroplane.v1.Roll");

  // behind: the state read is ahead of the events the watch brought.
  const behind = () => !replay && !!match && events.length > 0 && events[events.length - 1].seq < match.version;

  function ui(): string {
    if (!match) return "loading";
    if (replay) return "replay";
    if (busy) return "busy";
    if (behind()) return "sync"; // the board is drawn once the events are here: no move on an old one
    if (match.status === v1.MatchStatus.OPEN) return "open";
    if (match.status !== v1.MatchStatus.ACTIVE) return "over";
    if (mySeat(match) < 0) return "watch";
    if (!legal || !legal.anys.length) return "wait";
    if (kind === "aeroplane") return rolls().length ? "roll" : "move";
    if (kind === "carcassonne") {
      const ks = ccMoves().map((x) => x.m.kind);
      if (ks.includes(cc.MoveKind.PLACE)) return "place";
      if (ks.includes(cc.MoveKind.DEPLOY) || ks.includes(cc.MoveKind.LAND) || ks.includes(cc.MoveKind.PASS)) return "follower";
    }
    return "act";
  }

  async function play(i: number): Promise<void> {
    if (busy || !legal) return;
    busy = true;
    render();
    try {
      await session!.act(id, legal.version, legal.anys[i]);
      chosenPlane = undefined;
      preview = undefined;
      cell = undefined;
      rotation = undefined;
      showError(undefined);
    } catch (err) {
      showError(err);
    }
    busy = false;
    await refresh();
  }

  function prompt(state: string): string {
    const m = match!;
    const turnName = seatName(ctx, m.turnSeat);
    switch (state) {
      case "loading": return "Loading…";
      case "busy": return "Sending your move…";
      case "open": return "Waiting for players to join.";
      case "over": return resultText(m);
      case "watch": return `${turnName} to play. You are watching.`;
      case "wait": return `${turnName} to play (${m.seats[m.turnSeat]?.displayName || "bot"}). You play ${seatName(ctx, mySeat(m))}.`;
      case "roll": return "Your turn: roll the die (click it, or press R).";
      case "move": return chosenPlane === undefined
        ? "Your turn: click a glowing plane, or where it would go (or press 1–9)."
        : `Plane ${chosenPlane} chosen: click where it goes, or another plane.`;
      case "place": return cell ? "Turn the tile (R) until it fits as you like, then click it again or press Place." : "Your turn: click a dashed square to put the tile there.";
      case "follower": return "Put a follower on a feature of your tile (tap a circle on the large tile), or play none.";
      case "act": return "Your turn: choose an action.";
      case "replay": return `Replay: after event ${at} of ${total}`;
    }
    return "";
  }

  function render(): void {
    if (!match) return;
    // A state read ahead of the watch waits for its events: a plane is
    // drawn where it went once the events that say how it went are here.
    if (behind()) {
      root.dataset.ui = "sync";
      return;
    }
    const state = ui();
    root.dataset.ui = state;
    root.dataset.version = String(replay ? at : match.version);
    // What the page acts on: the version of its legal actions and of the
    // last event its watch brought (tests read them when a move goes astray).
    root.dataset.legal = legal ? String(legal.version) : "";
    root.dataset.seq = events.length ? String(events[events.length - 1].seq) : "";
    root.dataset.status = statusName(match.status);
    root.dataset.view = kind;
    const mine = mySeat(match);
    const lastEvent = replay ? events[at - 1] : events[events.length - 1];
    const last = lastEvent ? sentence(describe(lastEvent, ctx, statusName)) : "";
    turn.replaceChildren(
      h("p", { id: "prompt", class: "prompt" + (["roll", "move", "place", "follower", "act"].includes(state) ? " yours" : "") },
        mine >= 0 && match.status === v1.MatchStatus.ACTIVE ? h("span", { class: "swatch", style: `background:${seatColour(mine)}` }) : null,
        prompt(state)),
      h("p", { id: "last", class: "last" }, last));

    // The board.
    if (kind === "aeroplane" && apView) {
      const moves = state === "move" ? apMoves().map((x) => x.m) : [];
      apView.draw(apState(), { moves, seat: mine, chosen: chosenPlane, preview, moved: replay ? movedAt(at) : moved, paths, version: replay ? undefined : Number(match.version) });
      // The state drawn holds every event read: their paths are used up.
      if (events.length && events[events.length - 1].seq === match.version) paths.clear();
      if (apView.svg.parentNode !== boardWrap) boardWrap.replaceChildren(apView.svg);
      apView.svg.dataset.version = root.dataset.version;
    } else if (kind === "carcassonne") {
      const moves = state === "place" || state === "follower" ? ccMoves().map((x) => x.m) : [];
      carc.draw(carcSvg, ccState(), { moves, cell, rotation });
      if (carcSvg.parentNode !== boardWrap) boardWrap.replaceChildren(carcSvg);
      carcSvg.dataset.version = root.dataset.version;
    } else if (boardWrap.firstChild?.nodeName !== "PRE") {
      boardWrap.replaceChildren(h("pre", { id: "state-json", class: "state-json", tabindex: 0, "aria-label": "The match state as JSON" }));
    }
    if (kind === "other") (boardWrap.firstChild as HTMLElement).textContent = match.state ? JSON.stringify(game() ?? {}, jsonValue, 2) : "";

    // The controls beside it.
    const c: Node[] = [];
    if (replay) c.push(replayControls());
    if (kind === "aeroplane" && !replay && match.status === v1.MatchStatus.ACTIVE) {
      const st = apState();
      die.show(st?.die ?? 0, state === "roll", () => { const r = rolls()[0]; if (r) play(r.i); });
      // The die's box is kept across renders (the die rolls inside it);
      // only its words change.
      dieLabel.textContent = st?.die ? `${seatName(ctx, st.turnSeat)} rolled ${st.die}` : "";
      c.push(diceBox);
      if (state === "move") {
        c.push(h("ul", { id: "moves", class: "moves" }, apMoves().map(({ m, i }, n) =>
          h("li", {}, h("button", {
            class: "move", "data-index": i, "data-plane": m.plane,
            onclick: () => play(i),
            onmouseenter: () => { preview = m; render(); },
            onfocus: () => { preview = m; render(); },
          }, `${n + 1}. ${moveText(m)}`)))));
      }
    }
    if (kind === "carcassonne" && !replay) {
      const st = ccState();
      if (st && match.status === v1.MatchStatus.ACTIVE) {
        const places = ccMoves().filter((x) => x.m.kind === cc.MoveKind.PLACE);
        const here = cell ? places.filter((x) => x.m.x === cell![0] && x.m.y === cell![1]) : [];
        c.push(h("div", { class: "hand-box" },
          state === "follower" ? null : h("div", {}, h("p", { class: "small" }, "Tile in hand"), carc.hand(st.tile, rotation ?? here[0]?.m.rotation ?? 0)),
          h("div", { class: "hand-buttons" },
            state === "place" ? h("button", { id: "rotate", disabled: here.length < 2, onclick: rotate }, "Rotate (R)") : null,
            state === "place" ? h("button", { id: "place", class: "primary", disabled: !here.length, onclick: placeChosen }, "Place tile") : null,
            state === "follower" ? followerPicker(st) : null,
            ...(state === "follower" ? followerButtons(st) : []),
            state === "follower" ? h("button", { id: "no-follower", onclick: () => { const p = ccMoves().find((x) => x.m.kind === cc.MoveKind.PASS); if (p) play(p.i); } }, "No follower") : null,
            ...ccMoves().filter((x) => x.m.kind === cc.MoveKind.FLY).map((x) => h("button", { class: "fly", onclick: () => play(x.i) }, "Fly a follower from the flying machine")),
            h("p", { class: "small" }, `${st.tilesLeft} tiles left`))));
      }
    }
    if (kind === "other" && state === "act") {
      c.push(h("ul", { id: "actions", class: "moves" }, (legal?.anys ?? []).map((a, i) =>
        h("li", {}, h("button", { class: "action", "data-index": i, onclick: () => play(i) }, (legal!.msgs[i] as { notation?: string } | undefined)?.notation || a.typeUrl.split("/").pop() || "action")))));
    }
    if (match.status === v1.MatchStatus.OPEN && !replay) {
      if (mine < 0 && match.seats.some((x) => x.status === v1.SeatStatus.EMPTY)) c.push(h("button", { id: "join", class: "primary", onclick: () => call(() => session!.matches.joinMatch({ matchId: id, expectedVersion: match!.version })) }, "Join"));
      if (match.private && match.creatorId === me?.playerId) c.push(invitePanel());
      if (match.creatorId === me?.playerId) c.push(h("button", { id: "start", onclick: () => call(() => session!.matches.startMatch({ matchId: id, expectedVersion: match!.version })) }, "Start now (bots fill the seats)"));
    }
    if (!replay && (match.status === v1.MatchStatus.FINISHED || match.status === v1.MatchStatus.ABANDONED)) {
      c.push(h("p", { id: "result", class: "result" }, resultText(match)),
        h("div", { class: "row" },
          h("a", { class: "button", id: "to-replay", href: `#/replay/${id}` }, "Watch the replay"),
          h("button", { class: "primary", id: "again", onclick: () => createMatch(match!.game, match!.seats.filter((x) => x.status === v1.SeatStatus.BOT).length || 1, match!.seats.length, true).catch(showError) }, "Play again"),
          h("a", { class: "button", href: "#/" }, "Lobby")));
    }
    const offers = offersPanel(match, mine);
    if (offers) c.push(offers);
    if (!replay && match.status === v1.MatchStatus.ACTIVE && mine >= 0) {
      c.push(h("button", { id: "resign", class: "link", onclick: () => { if (confirm("Resign? A bot plays your seat to the end, and you are ranked last.")) call(() => session!.matches.leaveMatch({ matchId: id, expectedVersion: match!.version })); } }, "Resign"));
    }
    const key = JSON.stringify([state, String(match.version), offerNote, at, chosenPlane, cell, rotation, legal ? String(legal.version) : "", document.activeElement?.id ?? ""]);
    if (key !== lastShown) {
      lastShown = key;
      const focused = document.activeElement as HTMLElement | null;
      const focusId = focused && controls.contains(focused) ? focused.id || focused.dataset.index : undefined;
      controls.replaceChildren(...c);
      if (focusId) (controls.querySelector<HTMLElement>(`#${CSS.escape(focusId)}`) ?? controls.querySelector<HTMLElement>(`[data-index="${focusId}"]`))?.focus();
    }
    seatsEl.replaceChildren(...match.seats.map((x) => {
      const st = ccState();
      return h("li", { class: x.seat === match!.turnSeat && match!.status === v1.MatchStatus.ACTIVE ? "turn" : "", "data-seat": x.seat },
        h("span", { class: "swatch", style: `background:${seatColour(x.seat)}` }),
        h("span", {}, `${seatName(ctx, x.seat)}: `, x.playerId ? h("a", { href: `#/player/${x.playerId}` }, x.displayName) : x.status === v1.SeatStatus.EMPTY ? "empty seat" : x.displayName || "bot",
          x.status === v1.SeatStatus.BOT ? " (bot)" : "", x.seat === mine ? " (you)" : "",
          kind === "carcassonne" && st ? ` · ${st.scores[x.seat] ?? 0} points, ${st.supply[x.seat] ?? 0} followers` : "",
          x.place ? ` · ${ordinal(x.place)}` : ""),
        replay ? null : h("span", { class: "clock", "data-seat": x.seat }));
    }));
    clockLine.textContent = replay ? "" : clock.describeControl(match);
    tick();
    // The chat: the players' channel once the caller is seated (a
    // spectator who joins changes channel), the spectators' otherwise.
    const channel = mine >= 0 ? v1.ChatChannel.PLAYERS : v1.ChatChannel.SPECTATORS;
    if (!replay && me && channel !== chatChannel) {
      chatStop?.abort();
      chatStop = new AbortController();
      abort.signal.addEventListener("abort", () => chatStop?.abort());
      chatChannel = channel;
      chatBox.replaceChildren(chatPanel({ session: session!, matchId: id, me: me.playerId, nameOf, errorText, signal: chatStop.signal, channel }));
    }
  }
  let chatChannel: v1.ChatChannel | undefined;
  let chatStop: AbortController | undefined;

  // tick shows each seat's clock now: the seat to act counts down.
  function tick(): void {
    if (!match) return;
    for (const el of seatsEl.querySelectorAll<HTMLElement>(".clock")) {
      const seat = match.seats[Number(el.dataset.seat)];
      const left = seat ? clock.seatClock(match, seat, Date.now()) : undefined;
      el.textContent = left === undefined ? "" : ` · ${clock.clockText(left)}`;
      if (left === undefined) delete el.dataset.ms;
      else el.dataset.ms = String(Math.max(0, Math.round(left)));
    }
  }
  if (!replay) clockTimer = window.setInterval(tick, 1000);

  // offersPanel is what a match offers its seated players beside the board:
  // a draw, an abort or a takeback in play, a rematch after the end; the
  // open offer to answer; and the latest offer's outcome. The server says
  // what a game allows: a refusal shows its message.
  function offersPanel(m: v1.Match, mine: number): Node | null {
    if (replay) return null;
    const ended = m.status === v1.MatchStatus.FINISHED || m.status === v1.MatchStatus.ABANDONED;
    const box = h("div", { id: "offers", class: "offers" });
    if (offerNote) box.append(h("p", { id: "offer-note", class: "small", role: "status" }, offerNote));
    if (m.rematchMatchId) {
      box.append(h("a", { id: "rematch-go", class: "button primary", href: `#/match/${encodeURIComponent(m.rematchMatchId)}` }, "Go to the rematch"));
      return box;
    }
    const o = m.offer;
    const offer = (kind: v1.OfferKind) => () => call(() => session!.offers.makeOffer({ matchId: id, kind, requestId: newRequestId() }));
    if (o && o.offerId) {
      const maker = m.seats[o.seat];
      const what = offerKind(o.kind);
      box.dataset.offer = v1.OfferKind[o.kind].toLowerCase();
      if (o.seat === mine) {
        box.append(h("p", { id: "offer-open", class: "offer" }, `You offer ${what}: waiting for an answer.`));
      } else if (mine >= 0 && o.answerSeats.includes(mine) && !o.acceptedSeats.includes(mine)) {
        const answer = (accept: boolean) => () => call(() => session!.offers.answerOffer({ matchId: id, offerId: o.offerId, accept, requestId: newRequestId() }));
        box.append(h("p", { id: "offer-open", class: "offer" }, `${seatName(ctx, o.seat)} (${maker?.displayName || "a player"}) offers ${what}.`),
          h("div", { class: "row" },
            h("button", { id: "offer-accept", class: "primary", onclick: answer(true) }, "Accept"),
            h("button", { id: "offer-decline", onclick: answer(false) }, "Decline")));
      } else {
        box.append(h("p", { id: "offer-open", class: "offer" }, `${seatName(ctx, o.seat)} (${maker?.displayName || "a player"}) offers ${what}: waiting for the other players.`));
      }
      return box;
    }
    if (mine < 0) return box.firstChild ? box : null;
    const others = m.seats.some((x) => x.status === v1.SeatStatus.PLAYER && x.seat !== mine);
    if (ended) {
      box.append(h("button", { id: "offer-rematch", class: "primary", onclick: offer(v1.OfferKind.REMATCH) }, others ? "Offer a rematch" : "Rematch: the same seats, rotated"));
    } else if (m.status === v1.MatchStatus.ACTIVE && others) {
      // GameInfo may say whether a game has draws and takebacks; without it
      // the buttons show and the server's refusal says why not.
      const info = games?.get(m.game) as (v1.GameInfo & { draws?: boolean; takebacks?: boolean }) | undefined;
      box.append(h("div", { class: "row" },
        info?.draws === false ? null : h("button", { id: "offer-draw", onclick: offer(v1.OfferKind.DRAW) }, "Offer a draw"),
        h("button", { id: "offer-abort", onclick: offer(v1.OfferKind.ABORT) }, "Offer to abort"),
        info?.takebacks === false ? null : h("button", { id: "offer-takeback", onclick: offer(v1.OfferKind.TAKEBACK) }, "Ask to take back my move")));
    }
    return box.firstChild ? box : null;
  }

  // invitePanel offers the creator of a private match its invite link.
  function invitePanel(): Node {
    const box = h("div", { class: "invite", id: "invite" }, h("p", {}, "This match is private: send the invite link to the players you want."));
    const field = h("input", { id: "invite-link", readonly: true, "aria-label": "Invite link", value: "" });
    const copy = h("button", { id: "copy-invite", onclick: () => { field.select(); navigator.clipboard?.writeText(field.value).catch(() => {}); copy.textContent = "Copied"; } }, "Copy link");
    const make = h("button", { id: "make-invite", class: "primary", onclick: () => inviteLink(id).then((link) => { field.value = link; box.replaceChildren(box.firstChild!, field, copy); }).catch(showError) }, "Make an invite link");
    box.append(make);
    if (localStorage.getItem(`hangar.invite.${id}`)) make.click();
    return box;
  }

  // followerPicker is the tile a follower may go on, drawn large with a
  // spot on each feature that may take one.
  function followerPicker(st: cc.State): Node | null {
    const last = st.phase === cc.Phase.LANDING && st.target ? st.board.find((t) => t.x === st.target!.x && t.y === st.target!.y) : st.board[st.board.length - 1];
    const deploys = ccMoves().filter((x) => x.m.kind === cc.MoveKind.DEPLOY || x.m.kind === cc.MoveKind.LAND);
    if (!last || !deploys.length) return null;
    return h("div", { class: "picker-box" }, h("p", { class: "small" }, "Tap a circle to put a follower there"),
      carc.picker(last, deploys.map((x) => x.m.feature), (f) => `Follower on the ${say(carc.featureKey(f.kind))} (f${f.index})`,
        (feature) => { const mv = deploys.find((x) => x.m.feature === feature); if (mv) play(mv.i); }));
  }

  // followerButtons are the features a follower may go on, as buttons
  // beside the board (the board's circles are small on a phone).
  function followerButtons(st: cc.State): Node[] {
    const board = st.board;
    const last = st.phase === cc.Phase.LANDING && st.target ? board.find((t) => t.x === st.target!.x && t.y === st.target!.y) : board[board.length - 1];
    return ccMoves().filter((x) => x.m.kind === cc.MoveKind.DEPLOY || x.m.kind === cc.MoveKind.LAND).map((x) => {
      const f = last?.features.find((y) => y.index === x.m.feature);
      return h("button", { class: "deploy", "data-feature": x.m.feature, onclick: () => play(x.i) }, `Follower on the ${f ? say(carc.featureKey(f.kind)) : "feature"} (f${x.m.feature})`);
    });
  }

  const seatColour = (seat: number) => (kind === "aeroplane" ? aero.colourOf(ctx.board, seat) : carc.colourOf(seat));

  function moveText(m: ap.Move): string {
    if (m.kind === ap.MoveKind.PASS) return "Pass (leave the roll unused)";
    const pv = m.preview;
    const unit = pv && pv.planes.length > 1 ? `Planes ${pv.planes.map((p) => p.index).join("+")}` : `Plane ${m.plane}`;
    if (!pv) return `${unit}: ${m.notation}`;
    const parts = [m.kind === ap.MoveKind.TAKE_OFF ? "takes off" : `${aero.position(pv.from, say)} → ${aero.position(pv.to, say)}`];
    if (pv.jump) parts.push("jumps");
    if (pv.flight) parts.push("flies the shortcut");
    if (pv.stacks) parts.push("stacks");
    if (pv.finishes) parts.push("reaches the centre");
    if (pv.captures.length) parts.push(`captures ${pv.captures.map((c) => `${seatName(ctx, c.seat)} ${c.index}`).join(", ")}`);
    return m.kind === ap.MoveKind.TAKE_OFF ? `${unit} ${parts.join(", ")}` : `${unit}: ${parts.join(", ")}`;
  }

  async function call(f: () => Promise<unknown>): Promise<void> {
    try {
      await f();
      showError(undefined);
    } catch (err) {
      showError(err);
    }
    await refresh();
  }

  // Carcassonne: a cell, then its rotations, then place.
  function rotate(): void {
    if (!cell) return;
    const rots = ccMoves().filter((x) => x.m.kind === cc.MoveKind.PLACE && x.m.x === cell![0] && x.m.y === cell![1]).map((x) => x.m.rotation);
    if (!rots.length) return;
    const k = rots.indexOf(rotation ?? rots[0]);
    rotation = rots[(k + 1) % rots.length];
    render();
  }
  function placeChosen(): void {
    if (!cell) return;
    const mv = ccMoves().find((x) => x.m.kind === cc.MoveKind.PLACE && x.m.x === cell![0] && x.m.y === cell![1] && x.m.rotation === (rotation ?? x.m.rotation));
    if (mv) play(mv.i);
  }

  function onBoard(target: Element | null): void {
    if (!target || !match) return;
    const state = ui();
    if (kind === "aeroplane" && state === "move") {
      const plane = target.closest<SVGGElement>(".plane.movable");
      const moves = apMoves();
      if (plane) {
        const index = Number(plane.dataset.index);
        const its = moves.filter((x) => x.m.plane === index && x.m.kind !== ap.MoveKind.PASS);
        if (its.length === 1) return void play(its[0].i);
        chosenPlane = index;
        preview = its[0]?.m;
        return render();
      }
      const t = target.closest<SVGElement>(".target");
      if (t) {
        const idx = (t.dataset.moves ?? "").split(" ").map(Number);
        if (idx.length) return void play(moves[idx[0]].i);
      }
    }
    if (kind === "carcassonne" && state === "place") {
      const spot = target.closest<SVGElement>(".spot");
      if (spot) {
        const c: [number, number] = [Number(spot.dataset.x), Number(spot.dataset.y)];
        if (cell && cell[0] === c[0] && cell[1] === c[1]) return placeChosen();
        cell = c;
        rotation = undefined;
        return render();
      }
    }
  }
  boardWrap.addEventListener("click", (e) => onBoard(kind === "aeroplane" && apView ? apView.nearest(e.clientX, e.clientY) ?? (e.target as Element) : (e.target as Element)));
  boardWrap.addEventListener("keydown", (e) => {
    if (e.key === "Enter" || e.key === " ") {
      e.preventDefault();
      onBoard(e.target as Element);
    }
  });
  boardWrap.addEventListener("mouseover", (e) => {
    if (kind !== "aeroplane" || ui() !== "move") return;
    const plane = (e.target as Element).closest<SVGGElement>(".plane.movable");
    const mv = plane ? apMoves().find((x) => x.m.plane === Number(plane.dataset.index))?.m : undefined;
    if (mv && mv !== preview) {
      preview = mv;
      render();
    }
  });

  function onKey(e: KeyboardEvent): void {
    if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey || e.altKey) return;
    const state = ui();
    if ((e.key === "r" || e.key === "R") && state === "roll") return void document.getElementById("roll")?.click();
    if ((e.key === "r" || e.key === "R") && state === "place") return rotate();
    if (e.key === "Escape") {
      chosenPlane = undefined;
      cell = undefined;
      return render();
    }
    if (/^[1-9]$/.test(e.key) && state === "move") {
      const mv = apMoves()[Number(e.key) - 1];
      if (mv) play(mv.i);
    }
  }
  document.addEventListener("keydown", onKey);

  // refresh reads the match (at the replay's version) and the caller's
  // legal actions; calls made while one runs make it read once more.
  let refreshing: Promise<void> | undefined;
  let again = false;
  function refresh(): Promise<void> {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      try {
        for (let n = 0; n < 10; n++) {
          again = false;
          const m = (await session!.matches.getMatch({ matchId: id, atVersion: replay ? BigInt(at) : 0n })).match!;
          if (!match) {
            kind = kindOf(m.game);
            ctx = { kind, title: titleOf(m.game), offers: ctx.offers };
            if (kind === "aeroplane") {
              ctx.board = await aeroplaneBoard(m.game);
              if (ctx.board) apView = new aero.Board(ctx.board, `The Aeroplane Chess board`);
            }
          }
          let l: Legal | undefined;
          if (!replay && m.status === v1.MatchStatus.ACTIVE && mySeat(m) >= 0) {
            const r = await session!.moves.listLegalActions({ matchId: id });
            l = { version: r.version, anys: r.actions, msgs: r.actions.map((a) => unpack(a)) };
            if (r.version !== m.version) again = true;
          }
          match = m;
          legal = l;
          if (!again) break;
        }
      } catch (err) {
        showError(err);
      } finally {
        refreshing = undefined;
      }
      render();
    })();
    return refreshing;
  }

  // movedOf is the planes an Aeroplane event moved, if it moved any.
  function movedOf(ev: v1.Event | undefined): ap.PlaneRef[] | undefined {
    const e = gameEvent(ev);
    if (e?.$typeName !== "hangar.aeroplane.v1.Event") return undefined;
    const a = e as ap.Event;
    const k = ap.EventKind;
    return [k.TOOK_OFF, k.MOVED, k.JUMPED, k.FLEW, k.FINISHED, k.STACKED].includes(a.kind) ? a.planes : undefined;
  }
  // movedAt is what the last move up to event n moved (for a replay).
  function movedAt(n: number): ap.PlaneRef[] {
    for (let i = Math.min(n, events.length) - 1; i >= 0; i--) {
      const m = movedOf(events[i]);
      if (m) return m;
    }
    return [];
  }

  // pathOf adds to paths the squares an Aeroplane event moved its planes
  // over (a take-off, a walk, a jump, a flight), for the board to fly them.
  function pathOf(ev: v1.Event): void {
    const e = gameEvent(ev);
    if (e?.$typeName !== "hangar.aeroplane.v1.Event") return;
    const a = e as ap.Event;
    const k = ap.EventKind;
    for (const p of a.planes) {
      const key = `${p.seat}/${p.index}`;
      const seq = Number(ev.seq);
      if (a.kind === k.TOOK_OFF) paths.set(key, { path: [a.to], seq });
      else if (a.kind === k.MOVED) paths.set(key, { path: aero.steps(a.from, a.to, a.die), seq });
      else if (a.kind === k.JUMPED || a.kind === k.FLEW) paths.set(key, { path: [...(paths.get(key)?.path ?? []), a.to], seq });
    }
  }

  function addLog(ev: v1.Event): void {
    events.push(ev);
    if (["offerMade", "offerAnswered", "offerLapsed", "movesTakenBack", "rematchStarted"].includes(ev.body.case ?? "")) offerNote = sentence(describe(ev, ctx, statusName)) + ".";
    moved = movedOf(ev) ?? moved;
    if (!replay) pathOf(ev);
    const li = h("li", { "data-seq": String(ev.seq) }, kind === "other" ? eventJSON(ev) : sentence(describe(ev, ctx, statusName)));
    if (replay) {
      li.tabIndex = 0;
      li.addEventListener("click", () => seek(Number(ev.seq)));
      li.addEventListener("keydown", (e) => { if (e.key === "Enter") seek(Number(ev.seq)); });
    }
    log.prepend(li);
  }

  // The replay: a slider over the versions, the log to jump.
  let playing = 0;
  function seek(n: number): void {
    at = Math.max(1, Math.min(n, total));
    refresh().then(() => {
      for (const li of log.children) li.classList.toggle("current", (li as HTMLElement).dataset.seq === String(at));
      render();
    });
  }
  let total = 0;
  function replayControls(): Node {
    const slider = h("input", { id: "slider", type: "range", min: 1, max: total, value: at, step: 1, "aria-label": "Event number" });
    slider.addEventListener("input", () => seek(Number(slider.value)));
    const toggle = () => {
      if (playing) {
        clearInterval(playing);
        playing = 0;
        render();
        return;
      }
      if (at >= total) seek(1);
      playing = window.setInterval(() => {
        if (at >= total) {
          clearInterval(playing);
          playing = 0;
          return render();
        }
        seek(at + 1);
      }, 500);
      render();
    };
    return h("div", { class: "scrub" },
      h("button", { id: "prev", "aria-label": "Previous event", onclick: () => seek(at - 1) }, "◀"),
      slider,
      h("button", { id: "next", "aria-label": "Next event", onclick: () => seek(at + 1) }, "▶"),
      h("button", { id: "play", onclick: toggle }, playing ? "Pause" : "Play"),
      h("a", { href: `#/match/${id}`, class: "button" }, "Live view"));
  }

  (async () => {
    if (replay) {
      const all: v1.Event[] = [];
      let page = "";
      try {
        do {
          const r = await session!.matches.listMatchEvents({ matchId: id, pageToken: page, pageSize: 1000 });
          all.push(...r.events);
          page = r.nextPageToken;
        } while (page);
      } catch (err) {
        showError(err);
      }
      total = all.length;
      at = total;
      timer = 0;
      await refresh();
      for (const ev of all) addLog(ev);
      seek(total);
      return;
    }
    await refresh();
    try {
      for await (const r of session!.watch(id, { signal: abort.signal, maxRetries: Infinity })) {
        ctx.startPhase = r.phase === "start";
        if (r.event) addLog(r.event);
        if (!match || r.version > match.version) refresh();
        else render();
      }
      await refresh();
    } catch (err) {
      if (!abort.signal.aborted) showError(err);
      return;
    }
    // A watch ends with the match's end. Offers of a rematch come after
    // it: every second and a half the page reads the match and the events
    // after the last one it has (ListMatchEvents), until the rematch starts.
    let polling = false;
    root.dataset.polling = "";
    pollTimer = window.setInterval(async () => {
      if (polling || abort.signal.aborted) return;
      if (match?.rematchMatchId && !behind()) return clearInterval(pollTimer);
      polling = true;
      try {
        const r = await session!.matches.listMatchEvents({ matchId: id, afterSeq: BigInt(events.length), pageSize: 100 });
        for (const ev of r.events) if (ev.seq === BigInt(events.length + 1)) addLog(ev);
        if (r.events.length) await refresh();
      } catch (err) {
        if (!abort.signal.aborted) showError(err);
      } finally {
        polling = false;
      }
    }, 1500);
  })();
}

// eventJSON is an event as the generic view shows it: the game's own
// message unpacked, everything as JSON.
function eventJSON(ev: v1.Event): Node {
  const body = ev.body.case === "game" ? { game: gameEvent(ev) ?? ev.body.value.typeUrl } : { [ev.body.case ?? "unknown"]: ev.body.value };
  return h("code", { class: "event-json" }, JSON.stringify({ seq: ev.seq, ...body }, jsonValue));
}
const jsonValue = (k: string, v: unknown) => (typeof v === "bigint" ? String(v) : k === "$typeName" ? undefined : v);

/**
 * RollingDie is the Aeroplane die: one button kept across renders, so a
 * new face rolls (a few random faces, then the rolled one) rather than
 * just appearing. With reduced motion it shows the face at once. While
 * it rolls the button has data-rolling; data-faces lists the faces the
 * last roll showed, the rolled one last.
 */
class RollingDie {
  readonly button = h("button", { id: "roll", class: "die" });
  #face = -1;
  #timer = 0;
  #onclick: () => void = () => {};

  constructor() {
    this.button.addEventListener("click", () => this.#onclick());
  }

  show(face: number, ready: boolean, onclick: () => void): void {
    this.#onclick = onclick;
    this.button.classList.toggle("ready", ready);
    this.button.disabled = !ready;
    this.button.setAttribute("aria-label", ready ? "Roll the die" : `The die shows ${face || "nothing"}`);
    if (face === this.#face) return;
    const first = this.#face < 0;
    this.#face = face;
    this.button.dataset.die = String(face);
    clearInterval(this.#timer);
    const reduce = matchMedia("(prefers-reduced-motion: reduce)").matches;
    if (first || !face || reduce) {
      delete this.button.dataset.rolling;
      this.button.dataset.faces = String(face);
      this.button.replaceChildren(aero.dieFace(face));
      return;
    }
    // Six tumbles, each a face other than the one before, then the roll.
    const faces: number[] = [];
    for (let i = 0; i < 6; i++) {
      let f = 1 + Math.floor(Math.random() * 5);
      if (f >= (faces[i - 1] ?? 7)) f++;
      faces.push(f);
    }
    faces.push(face);
    this.button.dataset.rolling = "";
    this.button.dataset.faces = faces.join(" ");
    let i = 0;
    const step = () => {
      this.button.replaceChildren(aero.dieFace(faces[i]));
      this.button.style.setProperty("--tumble", String(i));
      if (++i === faces.length) {
        clearInterval(this.#timer);
        delete this.button.dataset.rolling;
      }
    };
    step();
    this.#timer = window.setInterval(step, 70);
  }
}

function resultText(m: v1.Match): string {
  if (m.status === v1.MatchStatus.ABANDONED) return "Abandoned.";
  const ranked = m.seats.filter((x) => x.place).sort((a, b) => a.place - b.place);
  const mine = mySeat(m);
  const me1 = ranked.find((x) => x.seat === mine);
  const head = me1 ? (me1.place === 1 ? "You won! " : `You came ${ordinal(me1.place)}. `) : "";
  return `${head}Finished: ${ranked.map((x) => `${x.place}. ${x.displayName || "bot"}`).join(", ")}`;
}

// ---- leaderboards and players ------------------------------------------------------

async function leadersView(game: string): Promise<void> {
  setView();
  const list = [...(games?.values() ?? [])];
  game ||= list[0]?.name ?? "";
  const body = h("div", {}, h("p", {}, "Loading…"));
  app.replaceChildren(h("section", { class: "card", id: "leaders" },
    h("h1", {}, `Leaderboard: ${titleOf(game)}`),
    h("nav", { class: "tabs", "aria-label": "Games" }, list.map((g) => h("a", { href: `#/leaders/${g.name}`, class: "button" + (g.name === game ? " primary" : ""), "aria-current": g.name === game ? "page" : undefined }, g.title || g.name))),
    body, errorBox()));
  try {
    const r = await session!.history.listLeaderboard({ game, pageSize: 50 });
    body.replaceChildren(r.entries.length
      ? h("table", { class: "table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Rank"), h("th", { scope: "col" }, "Player"), h("th", { scope: "col" }, "Rating"), h("th", { scope: "col" }, "Rated matches"))),
        h("tbody", {}, r.entries.map((e) => h("tr", { class: e.playerId === me?.playerId ? "me" : "" },
          h("td", {}, e.rank), h("td", {}, h("a", { href: `#/player/${e.playerId}` }, e.displayName)),
          h("td", {}, Math.round(e.rating?.score ?? 0)), h("td", {}, e.rating?.ratedMatches ?? 0)))))
      : h("p", { class: "empty" }, "No rated matches yet: finish one against people to appear here."));
  } catch (err) {
    showError(err);
  }
}

// friendsPage is the friends page: friends, requests, blocks.
function friendsPage(): void {
  const stop = new AbortController();
  setView(() => stop.abort());
  const box = h("div", { class: "friends-page" });
  app.replaceChildren(box, errorBox());
  friendsView({ session: session!, nameOf, showError }, box, stop.signal);
}

async function playerView(id: string): Promise<void> {
  setView();
  const body = h("div", {}, h("p", {}, "Loading…"));
  const rel = h("div", { class: "relation" });
  app.replaceChildren(h("section", { class: "card", id: "player" }, body, errorBox()));
  // The player's own page has their calendar.
  if (id === me?.playerId) app.append(calendarCard(session!));
  // The buttons to be friends or to block, for another player's page.
  const relations = async () => {
    if (id === me?.playerId) return;
    try {
      rel.replaceChildren(relationButtons({ session: session!, nameOf, showError }, await social(session!), id, relations));
    } catch (err) {
      showError(err);
    }
  };
  relations();
  try {
    const [p, hist] = await Promise.all([
      session!.players.getPlayer({ playerId: id }),
      session!.history.listPlayerMatches({ playerId: id, pageSize: 20 }),
    ]);
    const list = [...(games?.values() ?? [])];
    const stats = await Promise.all(list.map((g) => session!.history.getPlayerStats({ playerId: id, game: g.name }).then((r) => r.stats).catch(() => undefined)));
    const ratings = await Promise.all(list.map((g, i) => (stats[i]?.rating?.ratedMatches
      ? session!.history.getRatingHistory({ playerId: id, game: g.name, pageSize: 30 }).then((r) => r.changes).catch(() => [])
      : Promise.resolve([]))));
    body.replaceChildren(
      h("h1", {}, p.player?.displayName ?? "Player"),
      rel,
      h("h2", {}, "Statistics"),
      h("table", { class: "table" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Game"), h("th", { scope: "col" }, "Played"), h("th", { scope: "col" }, "Won"), h("th", { scope: "col" }, "Average place"), h("th", { scope: "col" }, "Rating"), h("th", { scope: "col" }, "Rank"))),
        h("tbody", {}, list.map((g, i) => {
          const st = stats[i];
          return h("tr", {}, h("td", {}, g.title || g.name), h("td", {}, st?.matchesPlayed ?? 0), h("td", {}, st?.matchesWon ?? 0),
            h("td", {}, st?.averagePlace ? st.averagePlace.toFixed(2) : "–"), h("td", {}, st?.rating ? Math.round(st.rating.score) : "–"), h("td", {}, st?.leaderboardRank || "–"));
        }))),
      ...list.flatMap((g, i) => ratings[i].length ? [h("h2", {}, `Rating in ${g.title || g.name}`), ratingLine(ratings[i])] : []),
      h("h2", {}, "Recent matches"),
      hist.matches.length
        ? h("ul", { class: "matches" }, hist.matches.map((pm) => h("li", { class: "match-row" },
          h("span", { class: "row-main" }, h("strong", {}, titleOf(pm.match!.game)), " ", pm.place ? `${ordinal(pm.place)} place` : "", " ",
            h("span", { class: "who" }, players(pm.match!)),
            pm.ratingBefore && pm.ratingAfter ? h("span", { class: "who" }, ` rating ${Math.round(pm.ratingBefore.score)} → ${Math.round(pm.ratingAfter.score)}`) : null),
          h("a", { class: "button replay", href: `#/replay/${pm.match!.matchId}` }, "Replay"))))
        : h("p", { class: "empty" }, "No finished matches yet."));
  } catch (err) {
    showError(err);
  }
}

// ratingLine draws a player's rating over their rated matches, oldest
// first, with the figures in words for a screen reader.
function ratingLine(changes: v1.RatingChange[]): Node {
  const pts = [...changes].reverse().map((c) => c.after?.score ?? 0);
  const first = changes[changes.length - 1]?.before?.score;
  if (first !== undefined) pts.unshift(first);
  const lo = Math.min(...pts);
  const hi = Math.max(...pts);
  const w = 300;
  const ht = 60;
  const x = (i: number) => (pts.length > 1 ? (i / (pts.length - 1)) * w : w / 2);
  const y = (v: number) => (hi > lo ? ht - ((v - lo) / (hi - lo)) * ht : ht / 2);
  const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  svg.setAttribute("viewBox", `-4 -4 ${w + 8} ${ht + 8}`);
  svg.setAttribute("class", "rating-line");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `Rating from ${Math.round(pts[0])} to ${Math.round(pts[pts.length - 1])} over ${changes.length} rated match${changes.length === 1 ? "" : "es"}`);
  const line = document.createElementNS("http://www.w3.org/2000/svg", "polyline");
  line.setAttribute("points", pts.map((v, i) => `${x(i)},${y(v)}`).join(" "));
  svg.append(line);
  return h("div", {}, svg, h("p", { class: "small" }, `${Math.round(pts[0])} → ${Math.round(pts[pts.length - 1])} over ${changes.length} rated match${changes.length === 1 ? "" : "es"}`));
}

window.addEventListener("hashchange", () => route());
route();
