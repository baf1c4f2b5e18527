// Drawing Aeroplane Chess from GetBoard's Board (squares on a grid, each
// seat's path) and a match's State (planes by path index).

const SVG = "http://www.w3.org/2000/svg";
const S = 30; // the side of a square, in px: grid x counts half squares

export const COLOURS = {
  red: "#d83b3b",
  yellow: "#e8b81c",
  blue: "#2f6fd6",
  green: "#2e9e4f",
};
const LIGHT = {
  red: "#f6c9c9",
  yellow: "#f8e7a6",
  blue: "#c6d8f6",
  green: "#c2e8cd",
};

export function el(name, attrs = {}, ...children) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs)) {
    if (v !== undefined && v !== null) e.setAttribute(k, v);
  }
  for (const c of children) e.append(c);
  return e;
}

export function seatColour(board, seat) {
  const c = board && board.seats[seat] ? board.seats[seat].colour : "";
  return COLOURS[c] || ["#d83b3b", "#e8b81c", "#2f6fd6", "#2e9e4f"][seat] || "#888";
}

// squareOf is the square index a plane of seat at path index position
// stands on.
export function squareOf(board, seat, position) {
  return board.seats[seat].path[position + 1];
}

function centre(sq) {
  return [(sq.x * S) / 2 + S, sq.y * S + S];
}

// draw renders the board and the planes into svg. hl, when set, is the
// move to highlight: {seat, preview, planes: [index]}.
export function draw(svg, board, state, hl) {
  svg.replaceChildren();
  const w = (board.width * S) / 2 + 2 * S;
  const h = board.height * S + 2 * S;
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  svg.append(el("rect", { x: 0, y: 0, width: w, height: h, class: "table" }));

  // The flights: a dashed line from each flight start to its end.
  for (const st of board.seats) {
    const a = board.squares[st.path[19]];
    const b = board.squares[st.path[31]];
    if (a && b) {
      const [x1, y1] = centre(a);
      const [x2, y2] = centre(b);
      svg.append(el("line", { x1, y1, x2, y2, class: "flight", stroke: seatColour(board, st.seat) }));
    }
  }

  for (const sq of board.squares) {
    const [cx, cy] = centre(sq);
    const colour = sq.colourSeat >= 0 ? board.seats[sq.colourSeat].colour : "";
    const big = sq.kind === "SQUARE_KIND_HANGAR" || sq.kind === "SQUARE_KIND_CENTRE";
    const side = big ? S * 1.8 : S * 0.92;
    const g = el("g", { class: "square " + (sq.kind || "").toLowerCase().replace("square_kind_", "k-"), "data-square": sq.index });
    g.append(
      el("rect", {
        x: cx - side / 2,
        y: cy - side / 2,
        width: side,
        height: side,
        rx: big ? 6 : 4,
        fill: sq.colourSeat >= 0 ? (sq.kind === "SQUARE_KIND_LOOP" || sq.kind === "SQUARE_KIND_HOME_COLUMN" ? COLOURS[colour] : LIGHT[colour]) : "#fff",
        "fill-opacity": sq.kind === "SQUARE_KIND_HOME_COLUMN" ? 0.6 : 1,
      }),
    );
    let mark = "";
    if (sq.flightStart) mark = "✈";
    else if (sq.turnIn) mark = "➜";
    else if (sq.kind === "SQUARE_KIND_CENTRE") mark = "★";
    if (mark) g.append(el("text", { x: cx, y: cy + 5, class: "mark" }, mark));
    svg.append(g);
  }

  const hlLayer = el("g", { class: "highlight" });
  svg.append(hlLayer);

  // Planes: those sharing a square are spread over it.
  const bySquare = new Map();
  for (const p of state.planes || []) {
    const sqi = squareOf(board, p.seat, p.position);
    if (!bySquare.has(sqi)) bySquare.set(sqi, []);
    bySquare.get(sqi).push(p);
  }
  const moving = new Set();
  const captured = new Set();
  if (hl && hl.preview) {
    for (const r of hl.preview.planes || []) moving.add(`${r.seat}/${r.index}`);
    for (const r of hl.preview.captures || []) captured.add(`${r.seat}/${r.index}`);
  } else if (hl) {
    for (const i of hl.planes || []) moving.add(`${hl.seat}/${i}`);
  }
  for (const [sqi, planes] of bySquare) {
    const sq = board.squares[sqi];
    if (!sq) continue;
    const [cx, cy] = centre(sq);
    const n = planes.length;
    const spread = sq.kind === "SQUARE_KIND_HANGAR" || sq.kind === "SQUARE_KIND_CENTRE" ? S * 0.42 : S * 0.24;
    planes.forEach((p, i) => {
      let x = cx;
      let y = cy;
      if (n > 1) {
        x += (i % 2 ? 1 : -1) * spread;
        y += (i < 2 ? -1 : 1) * spread * (n > 2 ? 1 : 0);
      }
      const key = `${p.seat}/${p.index}`;
      const cls = ["plane"];
      if (moving.has(key)) cls.push("moving");
      if (captured.has(key)) cls.push("captured");
      if (p.stacked) cls.push("stacked");
      const g = el("g", {
        class: cls.join(" "),
        "data-seat": p.seat,
        "data-index": p.index,
        "data-position": p.position,
        "data-square": sqi,
      });
      g.append(el("circle", { cx: x, cy: y, r: n > 1 ? S * 0.22 : S * 0.34, fill: seatColour(board, p.seat) }));
      g.append(el("text", { x, y: y + 4, class: "plane-label" }, String(p.index)));
      svg.append(g);
    });
  }

  if (hl && hl.preview) {
    const seatPath = board.seats[hl.seat].path;
    const pts = [hl.preview.from, ...(hl.preview.path || [])].map((p) => centre(board.squares[seatPath[p + 1]]));
    hlLayer.append(el("polyline", { points: pts.map((p) => p.join(",")).join(" "), class: "hl-path" }));
    (hl.preview.path || []).forEach((p, i, all) => {
      const [x, y] = centre(board.squares[seatPath[p + 1]]);
      const last = i === all.length - 1;
      hlLayer.append(el("circle", { cx: x, cy: y, r: last ? S * 0.5 : S * 0.14, class: last ? "hl-to" : "hl-step", "data-path-index": p }));
    });
  }
}

// describe says in words what a legal move does, from its preview.
export function describe(mv) {
  const pv = mv.preview;
  let s = mv.notation;
  if (!pv) return s;
  const parts = [];
  if (mv.kind === "MOVE_KIND_PASS") return `${s}: pass`;
  parts.push(pv.from < 0 ? "take off" : `${pos(pv.from)} → ${pos(pv.to)}`);
  if (pv.jump) parts.push("jump");
  if (pv.flight) parts.push("fly");
  if (pv.stacks) parts.push("stack");
  if (pv.finishes) parts.push("finish");
  if ((pv.captures || []).length) parts.push(`captures ${pv.captures.map((c) => `${c.seat}/${c.index}`).join(" ")}`);
  return `${s}: ${parts.join(", ")}`;
}

function pos(p) {
  if (p < 0) return "hangar";
  if (p === 0) return "launch";
  if (p === 56) return "centre";
  return "p" + p;
}
