// Drawing Carcassonne: each placed tile from its features as they lie on
// the board (PlacedTile carries them turned), followers on their features,
// the tile in hand from its TileType, and legal placements as outlines.

import { el } from "./aeroplane.js";

const T = 64; // a tile's side in px

const SEATS = ["#d83b3b", "#2f6fd6", "#e8b81c", "#2e9e4f", "#333"];
export const seatColour = (seat) => SEATS[seat] || "#888";

// Points on a tile of side 1, (0,0) its north-west corner.
const SIDE = {
  SIDE_NORTH: { mid: [0.5, 0], a: [0, 0], b: [1, 0] },
  SIDE_EAST: { mid: [1, 0.5], a: [1, 0], b: [1, 1] },
  SIDE_SOUTH: { mid: [0.5, 1], a: [1, 1], b: [0, 1] },
  SIDE_WEST: { mid: [0, 0.5], a: [0, 1], b: [0, 0] },
};
const HALF = {
  HALF_EDGE_NL: [0.25, 0.08],
  HALF_EDGE_NR: [0.75, 0.08],
  HALF_EDGE_EL: [0.92, 0.25],
  HALF_EDGE_ER: [0.92, 0.75],
  HALF_EDGE_SL: [0.75, 0.92],
  HALF_EDGE_SR: [0.25, 0.92],
  HALF_EDGE_WL: [0.08, 0.75],
  HALF_EDGE_WR: [0.08, 0.25],
};
const DIR = {
  DIRECTION_N: 0, DIRECTION_NE: 45, DIRECTION_E: 90, DIRECTION_SE: 135,
  DIRECTION_S: 180, DIRECTION_SW: 225, DIRECTION_W: 270, DIRECTION_NW: 315,
};

const lerp = (p, q, t) => [p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t];
const C = [0.5, 0.5];

// spot is where a follower on feature f stands, on a tile of side 1.
function spot(f) {
  const sides = f.sides || [];
  switch (f.kind) {
    case "FEATURE_KIND_CLOISTER":
      return [0.5, 0.5];
    case "FEATURE_KIND_CITY": {
      if (sides.length === 1) return lerp(SIDE[sides[0]].mid, C, 0.3);
      const m = avg(sides.map((s) => SIDE[s].mid));
      return lerp(C, m, sides.length === 4 ? 0 : 0.35);
    }
    case "FEATURE_KIND_ROAD":
      if (sides.length === 1) return lerp(SIDE[sides[0]].mid, C, 0.55);
      if (sides.length === 2) return lerp(C, avg(sides.map((s) => SIDE[s].mid)), 0.4);
      return lerp(SIDE[sides[0]].mid, C, 0.6);
    case "FEATURE_KIND_FIELD":
      return lerp(avg((f.halves || []).map((x) => HALF[x])), C, 0.1);
    default:
      return [0.5, 0.5];
  }
}

function avg(ps) {
  if (!ps.length) return [0.5, 0.5];
  return [ps.reduce((a, p) => a + p[0], 0) / ps.length, ps.reduce((a, p) => a + p[1], 0) / ps.length];
}

const pt = (ox, oy, p) => `${ox + p[0] * T},${oy + p[1] * T}`;

// tile draws one tile's features with its north-west corner at ox,oy.
export function tile(features, ox, oy, attrs = {}) {
  const g = el("g", { class: "tile", ...attrs });
  g.append(el("rect", { x: ox, y: oy, width: T, height: T, class: "field" }));
  const cities = features.filter((f) => f.kind === "FEATURE_KIND_CITY");
  for (const f of cities) {
    const sides = f.sides || [];
    if (sides.length === 1) {
      const s = SIDE[sides[0]];
      const ia = lerp(s.a, C, 0.42);
      const ib = lerp(s.b, C, 0.42);
      g.append(el("path", { class: "city", d: `M${pt(ox, oy, s.a)} L${pt(ox, oy, s.b)} L${pt(ox, oy, ib)} Q${pt(ox, oy, lerp(s.mid, C, 0.5))} ${pt(ox, oy, ia)} Z` }));
    } else {
      for (const sd of sides) {
        const s = SIDE[sd];
        g.append(el("polygon", { class: "city", points: [s.a, s.b, C].map((p) => pt(ox, oy, p)).join(" ") }));
      }
      if (sides.length === 2 && (sides.includes("SIDE_NORTH") === sides.includes("SIDE_SOUTH"))) {
        // Two opposite sides: the city runs through the middle.
        const vertical = sides.includes("SIDE_NORTH");
        g.append(el("rect", vertical
          ? { class: "city", x: ox + 0.3 * T, y: oy, width: 0.4 * T, height: T }
          : { class: "city", x: ox, y: oy + 0.3 * T, width: T, height: 0.4 * T }));
      }
    }
    if (f.pennant) {
      const [x, y] = lerp(spot(f), [0.5, 0.5], -0.25);
      g.append(el("path", { class: "pennant", d: `M${ox + x * T - 5},${oy + y * T - 5} h10 v5 l-5,5 l-5,-5 Z` }));
    }
  }
  for (const f of features.filter((f) => f.kind === "FEATURE_KIND_ROAD")) {
    const sides = f.sides || [];
    let d;
    if (sides.length === 2) d = `M${pt(ox, oy, SIDE[sides[0]].mid)} Q${pt(ox, oy, C)} ${pt(ox, oy, SIDE[sides[1]].mid)}`;
    else d = sides.map((s) => `M${pt(ox, oy, SIDE[s].mid)} L${pt(ox, oy, lerp(SIDE[s].mid, C, 0.75))}`).join(" ");
    g.append(el("path", { class: "road", d }));
  }
  const ends = features.filter((f) => f.kind === "FEATURE_KIND_ROAD" && (f.sides || []).length === 1);
  if (ends.length >= 3 && !features.some((f) => f.kind === "FEATURE_KIND_CLOISTER")) {
    // Roads ending at a crossing: a village in the middle.
    g.append(el("rect", { class: "village", x: ox + 0.38 * T, y: oy + 0.38 * T, width: 0.24 * T, height: 0.24 * T, rx: 2 }));
  }
  for (const f of features.filter((f) => f.kind === "FEATURE_KIND_CLOISTER")) {
    g.append(el("rect", { class: "cloister", x: ox + 0.32 * T, y: oy + 0.32 * T, width: 0.36 * T, height: 0.36 * T, rx: 3 }));
    g.append(el("text", { class: "cloister-mark", x: ox + 0.5 * T, y: oy + 0.57 * T }, "✝"));
  }
  for (const f of features.filter((f) => f.kind === "FEATURE_KIND_MACHINE")) {
    const deg = DIR[f.direction] || 0;
    g.append(el("text", { class: "machine", x: 0, y: 0, transform: `translate(${ox + 0.72 * T},${oy + 0.3 * T}) rotate(${deg - 45})` }, "✈"));
  }
  return g;
}

// draw renders the board: tiles, followers, and, when hl.move is a
// placement, its cell outlined.
export function draw(svg, state, hl) {
  svg.replaceChildren();
  const cells = (state.board || []).map((t) => [t.x, t.y]);
  const places = (state.legalMoves || []).filter((m) => m.kind === "MOVE_KIND_PLACE").map((m) => [m.x, m.y]);
  const all = cells.concat(places, hl && hl.move && hl.move.kind === "MOVE_KIND_PLACE" ? [[hl.move.x, hl.move.y]] : []);
  if (!all.length) all.push([0, 0]);
  const minX = Math.min(...all.map((c) => c[0])) - 1;
  const maxX = Math.max(...all.map((c) => c[0])) + 1;
  const minY = Math.min(...all.map((c) => c[1])) - 1;
  const maxY = Math.max(...all.map((c) => c[1])) + 1;
  const w = (maxX - minX + 1) * T;
  const hgt = (maxY - minY + 1) * T;
  svg.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  svg.append(el("rect", { x: 0, y: 0, width: w, height: hgt, class: "table carc" }));
  const at = (x, y) => [(x - minX) * T, (y - minY) * T];
  const byCell = new Map();
  for (const t of state.board || []) {
    const [ox, oy] = at(t.x, t.y);
    byCell.set(`${t.x},${t.y}`, t);
    svg.append(tile(t.features || [], ox, oy, { "data-x": t.x, "data-y": t.y, "data-tile": t.tile, "data-rotation": t.rotation }));
  }
  for (const f of state.followers || []) {
    const t = byCell.get(`${f.x},${f.y}`);
    if (!t) continue;
    const feat = (t.features || []).find((x) => x.index === f.feature) || { kind: f.kind };
    const [ox, oy] = at(f.x, f.y);
    const [sx, sy] = spot(feat);
    const lying = f.kind === "FEATURE_KIND_FIELD";
    svg.append(el(lying ? "rect" : "circle", lying
      ? { class: "follower farmer", x: ox + sx * T - 8, y: oy + sy * T - 4, width: 16, height: 8, fill: seatColour(f.seat), "data-seat": f.seat, "data-x": f.x, "data-y": f.y }
      : { class: "follower", cx: ox + sx * T, cy: oy + sy * T, r: 7, fill: seatColour(f.seat), "data-seat": f.seat, "data-x": f.x, "data-y": f.y }));
  }
  if (hl && hl.move) {
    const mv = hl.move;
    if (mv.kind === "MOVE_KIND_PLACE" && state.tile) {
      const [ox, oy] = at(mv.x, mv.y);
      const g = tile(state.tile.features || [], ox, oy, { class: "tile ghost" });
      g.setAttribute("transform", `rotate(${90 * mv.rotation} ${ox + T / 2} ${oy + T / 2})`);
      svg.append(g);
      svg.append(el("rect", { class: "hl-cell", x: ox, y: oy, width: T, height: T }));
    } else if (mv.kind === "MOVE_KIND_DEPLOY" || mv.kind === "MOVE_KIND_LAND") {
      const last = mv.kind === "MOVE_KIND_LAND" && state.target ? byCell.get(`${state.target.x},${state.target.y}`) : (state.board || [])[state.board.length - 1];
      if (last) {
        const feat = (last.features || []).find((x) => x.index === mv.feature);
        if (feat) {
          const [ox, oy] = at(last.x, last.y);
          const [sx, sy] = spot(feat);
          svg.append(el("circle", { class: "hl-to", cx: ox + sx * T, cy: oy + sy * T, r: 10 }));
        }
      }
    }
  }
}

// panel shows the tile in hand and the stack.
export function panel(state) {
  const div = document.createElement("div");
  div.className = "carc-panel";
  const info = document.createElement("p");
  info.textContent = `Tiles left: ${state.tilesLeft ?? "?"}`;
  div.append(info);
  if (state.tile && state.tile.name) {
    const svg = el("svg", { class: "hand", viewBox: `0 0 ${T} ${T}`, width: T * 1.5, height: T * 1.5, id: "hand" });
    svg.append(tile(state.tile.features || [], 0, 0, { "data-tile": state.tile.name }));
    const p = document.createElement("p");
    p.append(`Tile in hand: ${state.tile.name} `);
    div.append(p, svg);
  }
  return div;
}
