// Carcassonne drawn as SVG: each placed tile from its features as they lie
// on the board (PlacedTile carries them turned), followers on their
// features, the cells where the tile in hand fits, and the tile in hand.

import { carcassonne as cc } from "../../../sdk/typescript/src/index.js";
import { s } from "./dom.js";

const T = 64; // a tile's side

const SEATS = ["#d0312d", "#2463d1", "#e0a800", "#23924a", "#222"];
const NAMES = ["red", "blue", "yellow", "green", "black"];
export const colourOf = (seat: number) => SEATS[seat] ?? "#777";
export const colourName = (seat: number) => NAMES[seat] ?? "grey";

type P = [number, number];
const SIDE: Record<number, { mid: P; a: P; b: P }> = {
  [cc.Side.NORTH]: { mid: [0.5, 0], a: [0, 0], b: [1, 0] },
  [cc.Side.EAST]: { mid: [1, 0.5], a: [1, 0], b: [1, 1] },
  [cc.Side.SOUTH]: { mid: [0.5, 1], a: [1, 1], b: [0, 1] },
  [cc.Side.WEST]: { mid: [0, 0.5], a: [0, 1], b: [0, 0] },
};
const HALF: Record<number, P> = {
  [cc.HalfEdge.NL]: [0.25, 0.08],
  [cc.HalfEdge.NR]: [0.75, 0.08],
  [cc.HalfEdge.EL]: [0.92, 0.25],
  [cc.HalfEdge.ER]: [0.92, 0.75],
  [cc.HalfEdge.SL]: [0.75, 0.92],
  [cc.HalfEdge.SR]: [0.25, 0.92],
  [cc.HalfEdge.WL]: [0.08, 0.75],
  [cc.HalfEdge.WR]: [0.08, 0.25],
};
const C: P = [0.5, 0.5];
const lerp = (p: P, q: P, t: number): P => [p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t];
const avg = (ps: P[]): P => (ps.length ? [ps.reduce((a, p) => a + p[0], 0) / ps.length, ps.reduce((a, p) => a + p[1], 0) / ps.length] : C);

/** spot is where a follower on feature f stands, on a tile of side 1. */
export function spot(f: cc.Feature): P {
  const sides = f.sides;
  switch (f.kind) {
    case cc.FeatureKind.CITY:
      if (sides.length === 1) return lerp(SIDE[sides[0]].mid, C, 0.3);
      return lerp(C, avg(sides.map((x) => SIDE[x].mid)), sides.length === 4 ? 0 : 0.35);
    case cc.FeatureKind.ROAD:
      if (sides.length === 1) return lerp(SIDE[sides[0]].mid, C, 0.55);
      if (sides.length === 2) return lerp(C, avg(sides.map((x) => SIDE[x].mid)), 0.4);
      return lerp(SIDE[sides[0]].mid, C, 0.6);
    case cc.FeatureKind.FIELD:
      return lerp(avg(f.halves.map((x) => HALF[x])), C, 0.1);
    default:
      return C;
  }
}

/** featureName is a feature's kind in the phrasebook's words' key. */
export const featureKey = (k: cc.FeatureKind) => "carcassonne.feature." + (cc.FeatureKind[k] ?? "").toLowerCase();

const pt = (ox: number, oy: number, p: P) => `${ox + p[0] * T},${oy + p[1] * T}`;

/** tile draws one tile's features with its north-west corner at ox,oy. */
export function tile(features: cc.Feature[], ox: number, oy: number, attrs: Record<string, unknown> = {}): SVGElement {
  const g = s("g", { class: "tile", ...attrs });
  g.append(s("rect", { x: ox, y: oy, width: T, height: T, class: "field" }));
  for (const f of features.filter((f) => f.kind === cc.FeatureKind.CITY)) {
    const sides = f.sides;
    if (sides.length === 1) {
      const sd = SIDE[sides[0]];
      const ia = lerp(sd.a, C, 0.42);
      const ib = lerp(sd.b, C, 0.42);
      g.append(s("path", { class: "city", d: `M${pt(ox, oy, sd.a)} L${pt(ox, oy, sd.b)} L${pt(ox, oy, ib)} Q${pt(ox, oy, lerp(sd.mid, C, 0.5))} ${pt(ox, oy, ia)} Z` }));
    } else {
      for (const x of sides) {
        const sd = SIDE[x];
        g.append(s("polygon", { class: "city", points: [sd.a, sd.b, C].map((p) => pt(ox, oy, p)).join(" ") }));
      }
      if (sides.length === 2 && sides.includes(cc.Side.NORTH) === sides.includes(cc.Side.SOUTH)) {
        const vertical = sides.includes(cc.Side.NORTH);
        g.append(s("rect", vertical
          ? { class: "city", x: ox + 0.3 * T, y: oy, width: 0.4 * T, height: T }
          : { class: "city", x: ox, y: oy + 0.3 * T, width: T, height: 0.4 * T }));
      }
    }
    if (f.pennant) {
      const [x, y] = lerp(spot(f), C, -0.25);
      g.append(s("path", { class: "pennant", d: `M${ox + x * T - 5},${oy + y * T - 5} h10 v5 l-5,5 l-5,-5 Z` }));
    }
  }
  for (const f of features.filter((f) => f.kind === cc.FeatureKind.ROAD)) {
    const sides = f.sides;
    const d = sides.length === 2
      ? `M${pt(ox, oy, SIDE[sides[0]].mid)} Q${pt(ox, oy, C)} ${pt(ox, oy, SIDE[sides[1]].mid)}`
      : sides.map((x) => `M${pt(ox, oy, SIDE[x].mid)} L${pt(ox, oy, lerp(SIDE[x].mid, C, 0.75))}`).join(" ");
    g.append(s("path", { class: "road", d }));
  }
  const ends = features.filter((f) => f.kind === cc.FeatureKind.ROAD && f.sides.length === 1);
  if (ends.length >= 3 && !features.some((f) => f.kind === cc.FeatureKind.CLOISTER)) {
    g.append(s("rect", { class: "village", x: ox + 0.38 * T, y: oy + 0.38 * T, width: 0.24 * T, height: 0.24 * T, rx: 2 }));
  }
  for (const f of features.filter((f) => f.kind === cc.FeatureKind.CLOISTER)) {
    g.append(s("rect", { class: "cloister", x: ox + 0.32 * T, y: oy + 0.32 * T, width: 0.36 * T, height: 0.36 * T, rx: 3 }));
    g.append(s("path", { class: "cross", d: `M${ox + 0.5 * T},${oy + 0.38 * T} v${0.24 * T} M${ox + 0.42 * T},${oy + 0.46 * T} h${0.16 * T}` }));
  }
  return g;
}

/** Pick is what the player has chosen so far this turn. */
export interface Pick {
  moves: cc.Move[]; // the legal moves
  cell?: [number, number]; // the chosen cell
  rotation?: number; // the chosen rotation there
}

/** draw renders the board into svg, with the pick's cells, ghost tile and follower spots. */
export function draw(svg: SVGSVGElement, state: cc.State | undefined, pick?: Pick): void {
  svg.replaceChildren();
  const board = state?.board ?? [];
  const places = (pick?.moves ?? []).filter((m) => m.kind === cc.MoveKind.PLACE);
  const all: P[] = board.map((t) => [t.x, t.y] as P).concat(places.map((m) => [m.x, m.y] as P));
  if (!all.length) all.push([0, 0]);
  const minX = Math.min(...all.map((c) => c[0])) - 1;
  const maxX = Math.max(...all.map((c) => c[0])) + 1;
  const minY = Math.min(...all.map((c) => c[1])) - 1;
  const maxY = Math.max(...all.map((c) => c[1])) + 1;
  // At least five tiles across, so a small board is not drawn huge.
  const cols = Math.max(5, maxX - minX + 1);
  const rows = Math.max(4, maxY - minY + 1);
  const x0 = minX - Math.floor((cols - (maxX - minX + 1)) / 2);
  const y0 = minY - Math.floor((rows - (maxY - minY + 1)) / 2);
  const w = cols * T;
  const hgt = rows * T;
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  // A tile is never drawn narrower than 48 px, so each cell is a finger
  // wide: a big board scrolls inside its frame, never the page.
  svg.style.minWidth = `${cols * 48}px`;
  svg.append(s("rect", { x: 0, y: 0, width: w, height: hgt, class: "table carc" }));
  const at = (x: number, y: number): P => [(x - x0) * T, (y - y0) * T];
  const byCell = new Map<string, cc.PlacedTile>();
  for (const t of board) {
    const [ox, oy] = at(t.x, t.y);
    byCell.set(`${t.x},${t.y}`, t);
    svg.append(tile(t.features, ox, oy, { "data-x": t.x, "data-y": t.y, "data-tile": t.tile, "aria-hidden": "true" }));
  }
  for (const f of state?.followers ?? []) {
    const t = byCell.get(`${f.x},${f.y}`);
    if (!t) continue;
    const feat = t.features.find((x) => x.index === f.feature);
    const [ox, oy] = at(f.x, f.y);
    const [sx, sy] = feat ? spot(feat) : C;
    svg.append(s("circle", { class: "follower", cx: ox + sx * T, cy: oy + sy * T, r: 8, fill: colourOf(f.seat), "data-seat": f.seat, "aria-hidden": "true" }));
  }
  // The tile placed last, outlined.
  const lastTile = board[board.length - 1];
  if (lastTile && !(pick?.moves ?? []).some((m) => m.kind === cc.MoveKind.DEPLOY || m.kind === cc.MoveKind.LAND)) {
    const [ox, oy] = at(lastTile.x, lastTile.y);
    svg.append(s("rect", { class: "last", x: ox, y: oy, width: T, height: T, "aria-hidden": "true" }));
  }
  // The cells where the tile fits: a dashed outline each, to click.
  const cells = new Map<string, number[]>();
  for (const m of places) {
    const k = `${m.x},${m.y}`;
    cells.set(k, [...(cells.get(k) ?? []), m.rotation]);
  }
  for (const [k, rots] of cells) {
    const [x, y] = k.split(",").map(Number);
    const [ox, oy] = at(x, y);
    const chosen = pick?.cell && pick.cell[0] === x && pick.cell[1] === y;
    if (chosen && state?.tile) {
      const r = pick!.rotation ?? rots[0];
      const ghost = tile(state.tile.features, ox, oy, { class: "tile ghost", "aria-hidden": "true" });
      ghost.setAttribute("transform", `rotate(${90 * r} ${ox + T / 2} ${oy + T / 2})`);
      svg.append(ghost);
    }
    svg.append(s("rect", {
      class: "spot" + (chosen ? " chosen" : ""),
      x: ox + 2, y: oy + 2, width: T - 4, height: T - 4, rx: 6,
      "data-x": x, "data-y": y,
      role: "button", tabindex: 0,
      "aria-label": chosen ? `Place the tile here, at ${x},${y}` : `Put the tile at ${x},${y} (${rots.length} way${rots.length > 1 ? "s" : ""})`,
    }));
  }
  // The features of the tile just placed that may take a follower.
  const deploys = (pick?.moves ?? []).filter((m) => m.kind === cc.MoveKind.DEPLOY || m.kind === cc.MoveKind.LAND);
  if (deploys.length) {
    const last = state?.phase === cc.Phase.LANDING && state.target ? byCell.get(`${state.target.x},${state.target.y}`) : board[board.length - 1];
    if (last) {
      const [ox, oy] = at(last.x, last.y);
      svg.append(s("rect", { class: "last", x: ox, y: oy, width: T, height: T }));
      for (const m of deploys) {
        const f = last.features.find((x) => x.index === m.feature);
        if (!f) continue;
        const [sx, sy] = spot(f);
        // A mark only: the picker beside the board (picker) is what is
        // clicked, its spots drawn a finger wide.
        svg.append(s("circle", { class: "follower-mark", cx: ox + sx * T, cy: oy + sy * T, r: 9, "data-feature": m.feature, "aria-hidden": "true" }));
      }
    }
  }
}

/** hand draws the tile in hand, turned by rotation quarter turns. */
export function hand(t: cc.TileType | undefined, rotation: number): SVGElement {
  const svg = s("svg", { id: "hand", class: "hand", viewBox: `-4 -4 ${T + 8} ${T + 8}`, role: "img", "aria-label": t ? `Tile in hand: ${t.name}, turned ${rotation}` : "No tile in hand" });
  if (t) {
    const g = tile(t.features, 0, 0, { "data-tile": t.name });
    g.setAttribute("transform", `rotate(${90 * rotation} ${T / 2} ${T / 2})`);
    svg.append(g);
  }
  return svg;
}

/**
 * picker draws the tile a follower may go on, large (CSS makes it 216 px
 * across), with a spot a finger wide on each feature that may take one:
 * on a phone the board's own tiles are too small to point at a feature.
 * Each spot is a button that calls choose with its feature's index.
 */
export function picker(t: cc.PlacedTile, features: number[], label: (f: cc.Feature) => string, choose: (feature: number) => void): SVGElement {
  const svg = s("svg", { id: "picker", class: "picker", viewBox: `-4 -4 ${T + 8} ${T + 8}`, role: "group", "aria-label": "Where your follower goes" });
  svg.append(tile(t.features, 0, 0, { "aria-hidden": "true" }));
  for (const i of features) {
    const f = t.features.find((x) => x.index === i);
    if (!f) continue;
    const [sx, sy] = spot(f);
    const c = s("circle", {
      class: "follower-spot", cx: sx * T, cy: sy * T, r: 7.6,
      "data-feature": i, role: "button", tabindex: 0, "aria-label": label(f),
    });
    c.addEventListener("click", () => choose(i));
    c.addEventListener("keydown", (e) => {
      const k = (e as KeyboardEvent).key;
      if (k === "Enter" || k === " ") {
        e.preventDefault();
        choose(i);
      }
    });
    svg.append(c);
  }
  return svg;
}
