// The Aeroplane Chess board, drawn from GetBoard's Board (each square at
// its place on the layout's grid, each seat's path) and a match's State
// (each plane by its path index). Planes are kept from one drawing to the
// next, so a move slides them (a CSS transition on their transform).

import { aeroplane as ap } from "../../../sdk/typescript/src/index.js";
import { s } from "./dom.js";

const S = 40; // a square's side in the SVG's units

/** COLOURS are the seats' colours by the board's colour names. */
export const COLOURS: Record<string, string> = { red: "#d0312d", yellow: "#e0a800", blue: "#2463d1", green: "#23924a" };
const LIGHT: Record<string, string> = { red: "#f7d4d3", yellow: "#fbecb8", blue: "#d3e0f8", green: "#cfecd9" };
const FALLBACK = ["red", "yellow", "blue", "green"];

/** colourName is a seat's colour name ("red"). */
export function colourName(board: ap.Board | undefined, seat: number): string {
  return board?.seats[seat]?.colour || FALLBACK[seat] || "grey";
}
export const colourOf = (board: ap.Board | undefined, seat: number) => COLOURS[colourName(board, seat)] ?? "#777";

// The layout's grid: a token is four characters wide and a line high.
const X = (sq: ap.Square) => (sq.x / 4) * S + S;
const Y = (sq: ap.Square) => sq.y * S + S;

/** squareOf is the square a plane of seat at path index position stands on. */
export function squareOf(board: ap.Board, seat: number, position: number): ap.Square | undefined {
  return board.squares[board.seats[seat]?.path[position + 1] ?? -1];
}

/** position names a path index as the phrasebook's words do ("home2"). */
export function position(p: number, say: (k: string, a?: Record<string, string | number>) => string): string {
  if (p < 0) return say("aeroplane.position.hangar");
  if (p === 0) return say("aeroplane.position.launch");
  if (p >= 56) return say("aeroplane.position.centre");
  if (p > 50) return say("aeroplane.position.home", { n: p - 50 });
  return String(p);
}

/** Pick is what the board shows as playable: the legal moves, the chosen plane. */
export interface Pick {
  moves: ap.Move[];
  seat: number;
  chosen?: number; // a plane index whose moves alone are shown
  preview?: ap.Move; // a move whose path is drawn
  moved?: ap.PlaneRef[]; // the planes the last move moved, marked
  // paths are the path indices a plane ("seat/index") entered by the
  // latest move that moved it, from the move's events, with the event's
  // seq; a plane drawn before that event is flown along its path square by
  // square once the state drawn holds the event.
  paths?: Map<string, Flight>;
  version?: number; // the version of the state drawn
}

/** Flight is the path a plane's latest move took it along, and its event. */
export interface Flight {
  path: number[];
  seq: number;
}

/** STEP is how long a plane takes over one square of its path, in ms. */
const STEP = 140;
const reduced = () => typeof matchMedia === "function" && matchMedia("(prefers-reduced-motion: reduce)").matches;

/**
 * steps lists the path indices a unit enters walking die squares from
 * from to to, as the server's MovePreview.path does: forward, back down
 * from the centre after a bounce (which may end below from: p54 rolling 6
 * walks 55 56 55 54 53 52), or backwards when the roll reversed it.
 */
export function steps(from: number, to: number, die: number): number[] {
  const out: number[] = [];
  if (to < from && to !== 2 * 56 - from - die) {
    for (let p = from - 1; p >= to; p--) out.push(p);
    return out;
  }
  let p = from;
  for (; p < 56 && p < from + die; p++) out.push(p + 1);
  while (p > to) out.push(--p);
  return out;
}

/**
 * Board draws one board into an svg and redraws the planes of each state
 * given to draw. Clicks come back through onPlane and onMove.
 */
export class Board {
  readonly svg: SVGSVGElement;
  readonly #board: ap.Board;
  readonly #planes = new Map<string, SVGGElement>();
  readonly #top: SVGElement;
  readonly #marks: SVGElement;
  #moving = 0;

  constructor(board: ap.Board, label: string) {
    this.#board = board;
    // The hangars stand out from the layout's corners by half a square.
    const w = (board.width / 4) * S + 3 * S;
    const hgt = board.height * S + S;
    this.svg = s("svg", { id: "board", class: "board aeroplane", viewBox: `${-S / 2} 0 ${w} ${hgt}`, role: "group", "aria-label": label }) as SVGSVGElement;
    this.svg.append(s("rect", { x: -S / 2, y: 0, width: w, height: hgt, rx: 16, class: "table" }));
    this.#drawSquares();
    this.#marks = s("g", { class: "marks" });
    this.#top = s("g", { class: "planes" });
    // The marks lie above the planes: a destination wins over the big hit
    // circle of a plane beside it.
    this.svg.append(this.#top, this.#marks);
  }

  #drawSquares(): void {
    const b = this.#board;
    const g = s("g", { class: "squares", "aria-hidden": "true" });
    const centre = b.squares.find((q) => q.kind === ap.SquareKind.CENTRE);
    // The arms: each seat's home column as a band of its colour to the centre.
    for (const seat of b.seats) {
      const first = b.squares[seat.path[52]];
      if (first && centre) {
        g.append(s("line", { x1: X(first), y1: Y(first), x2: X(centre), y2: Y(centre), class: "arm", stroke: colourOf(b, seat.seat) }));
      }
      // The shortcut: a dashed line across the middle.
      const a = b.squares[seat.path[19]];
      const z = b.squares[seat.path[31]];
      if (a && z) g.append(s("line", { x1: X(a), y1: Y(a), x2: X(z), y2: Y(z), class: "flight", stroke: colourOf(b, seat.seat) }));
    }
    for (const sq of b.squares) {
      const cx = X(sq);
      const cy = Y(sq);
      const name = sq.colourSeat >= 0 ? colourName(b, sq.colourSeat) : "";
      switch (sq.kind) {
        case ap.SquareKind.HANGAR:
          g.append(s("rect", { x: cx - 1.5 * S, y: cy - 1.5 * S, width: 3 * S, height: 3 * S, rx: 12, fill: LIGHT[name], stroke: COLOURS[name], "stroke-width": 4, class: "hangar" }));
          for (const [dx, dy] of SPOTS) g.append(s("circle", { cx: cx + dx * S, cy: cy + dy * S, r: 0.5 * S, fill: "#fff", stroke: COLOURS[name], "stroke-width": 2 }));
          break;
        case ap.SquareKind.CENTRE:
          for (let i = 0; i < b.seats.length; i++) {
            const ang = [90, 180, 270, 0][i] ?? 0; // red from below, yellow left, blue above, green right
            g.append(s("path", { d: `M${cx},${cy} l${-0.9 * S},${0.9 * S} h${1.8 * S} Z`, fill: colourOf(b, i), transform: `rotate(${ang - 90} ${cx} ${cy})`, stroke: "#fff", "stroke-width": 2 }));
          }
          break;
        default: {
          const home = sq.kind === ap.SquareKind.HOME_COLUMN;
          const launch = sq.kind === ap.SquareKind.LAUNCH;
          const fill = name ? (home || sq.kind === ap.SquareKind.LOOP ? COLOURS[name] : LIGHT[name]) : "#fff";
          g.append(s("rect", { x: cx - 0.45 * S, y: cy - 0.45 * S, width: 0.9 * S, height: 0.9 * S, rx: launch ? 0.45 * S : 6, fill, class: "sq", stroke: launch ? COLOURS[name] : "#fff", "stroke-width": launch ? 4 : 2 }));
          if (sq.flightStart) g.append(s("path", { d: plane(cx, cy, 0.3 * S), class: "glyph" }));
          else if (sq.turnIn) g.append(s("path", { d: `M${cx - 8},${cy - 8} L${cx + 6},${cy} L${cx - 8},${cy + 8} Z`, class: "glyph" }));
        }
      }
    }
    this.svg.append(g);
  }

  /**
   * #fly moves plane g of seat from the transform from along the path
   * indices path to the transform to, a square a step, and records the
   * path in data-path (the tests compare it with the engine's preview).
   * When the path does not end where the plane stands now (it was sent
   * home since), the flight goes on from the path's end to there. With
   * reduced motion it goes straight there. The board's data-moving
   * counts the flights under way.
   */
  #fly(g: SVGGElement, seat: number, path: number[], from: string, to: string, ends: boolean): void {
    g.dataset.path = path.join(" ");
    for (const a of g.getAnimations()) if (!(a instanceof CSSTransition) && !(a instanceof CSSAnimation)) a.cancel();
    if (reduced() || !from || typeof g.animate !== "function") return;
    const frames: Keyframe[] = [{ transform: from }];
    for (const i of ends ? path.slice(0, -1) : path) {
      const q = this.#board.squares[this.#board.seats[seat]?.path[i + 1] ?? -1];
      if (q) frames.push({ transform: `translate(${X(q)}px, ${Y(q)}px)` });
    }
    frames.push({ transform: to });
    g.style.transition = "none";
    g.classList.add("flying");
    this.#moving++;
    this.svg.dataset.moving = String(this.#moving);
    const done = () => {
      g.style.transition = "";
      g.classList.remove("flying");
      this.#moving--;
      if (this.#moving) this.svg.dataset.moving = String(this.#moving);
      else delete this.svg.dataset.moving;
    };
    const a = g.animate(frames, { duration: STEP * (frames.length - 1), easing: "linear" });
    a.onfinish = done;
    a.oncancel = done;
  }

  /**
   * nearest is the movable plane or destination whose centre is nearest
   * to the point at client coordinates x,y, among those whose hit circle
   * holds it. The hit circles are a finger wide, so on a phone those of
   * planes side by side (a hangar's four) overlap: the one nearest to the
   * finger is the one meant, not the one drawn last.
   */
  nearest(x: number, y: number): Element | undefined {
    const m = this.svg.getScreenCTM();
    if (!m) return undefined;
    const p = new DOMPoint(x, y).matrixTransform(m.inverse());
    let best: Element | undefined;
    let bestD = Infinity;
    for (const e of this.svg.querySelectorAll<SVGGraphicsElement>(".plane.movable, .marks .target")) {
      const c = e.classList.contains("target")
        ? { x: Number(e.getAttribute("cx")), y: Number(e.getAttribute("cy")), r: Number(e.getAttribute("r")) }
        : { x: Number(e.dataset.x), y: Number(e.dataset.y), r: Number(e.querySelector(".hit")?.getAttribute("r")) * Number(e.dataset.scale ?? 1) };
      const d = Math.hypot(p.x - c.x, p.y - c.y);
      if (d <= c.r && d < bestD) {
        best = e;
        bestD = d;
      }
    }
    return best;
  }

  /** draw places the state's planes and the pick's marks. */
  draw(state: ap.State | undefined, pick?: Pick): void {
    const b = this.#board;
    const seen = new Set<string>();
    const movable = new Set<string>();
    const chosen = pick?.chosen;
    for (const mv of pick?.moves ?? []) if (mv.kind !== ap.MoveKind.PASS) movable.add(`${pick!.seat}/${mv.plane}`);
    // Planes sharing a square are spread over it; a hangar has a spot each.
    const bySquare = new Map<number, ap.Plane[]>();
    for (const p of state?.planes ?? []) {
      const sq = squareOf(b, p.seat, p.position);
      if (!sq) continue;
      const list = bySquare.get(sq.index) ?? [];
      list.push(p);
      bySquare.set(sq.index, list);
    }
    for (const [i, planes] of bySquare) {
      const sq = b.squares[i];
      const hangar = sq.kind === ap.SquareKind.HANGAR || sq.kind === ap.SquareKind.CENTRE;
      planes.forEach((p, k) => {
        const [dx, dy] = hangar ? SPOTS[p.index % 4] : planes.length > 1 ? SHARE[k % 4] : [0, 0];
        const key = `${p.seat}/${p.index}`;
        seen.add(key);
        let g = this.#planes.get(key);
        if (!g) {
          g = s("g", { class: "plane", "data-seat": p.seat, "data-index": p.index }) as SVGGElement;
          g.append(
            s("circle", { class: "hit", r: 0.6 * S }),
            s("circle", { class: "ring", r: 0.62 * S }),
            s("circle", { class: "body", r: 0.42 * S, fill: colourOf(b, p.seat) }),
            s("path", { class: "glyph", d: plane(0, -3, 0.22 * S) }),
            s("text", { class: "num", y: 0.3 * S }, String(p.index)),
          );
          this.#top.append(g);
          this.#planes.set(key, g);
        }
        const m = movable.has(key) && (chosen === undefined || chosen === p.index);
        const shrink = hangar ? 1 : planes.length > 1 ? 0.8 : 1;
        const to = `translate(${X(sq) + dx * S}px, ${Y(sq) + dy * S}px) scale(${shrink})`;
        // A plane that moved since it was last drawn flies its path, also
        // one that bounced back to its square; one sent home since (a
        // capture read in the same state) flies it, then home. The
        // version it was drawn at keeps a flight from being flown twice.
        const f = pick?.paths?.get(key);
        const drawn = g.dataset.drawn === undefined ? undefined : Number(g.dataset.drawn);
        const version = pick?.version;
        if (f && version !== undefined && drawn !== undefined && f.seq > drawn && f.seq <= version) {
          this.#fly(g, p.seat, f.path, g.style.transform, to, f.path[f.path.length - 1] === p.position);
        }
        if (version !== undefined) g.dataset.drawn = String(version);
        g.style.transform = to;
        g.dataset.x = String(X(sq) + dx * S);
        g.dataset.y = String(Y(sq) + dy * S);
        g.dataset.scale = String(shrink);
        g.dataset.position = String(p.position);
        g.dataset.square = String(i);
        // A movable plane's hit circle is a finger wide at a phone's scale,
        // and it lies above the others (moved there once: a node moved
        // under the pointer loses its click).
        if (m && !g.classList.contains("movable")) this.#top.append(g);
        g.classList.toggle("movable", m);
        g.querySelector(".hit")!.setAttribute("r", String(((m ? 1.25 : 0.6) * S) / shrink));
        g.classList.toggle("stacked", p.stacked);
        g.classList.toggle("moved", !!pick?.moved?.some((r) => r.seat === p.seat && r.index === p.index));
        g.classList.toggle("chosen", chosen === p.index && p.seat === pick?.seat);
        const where = position(p.position, (k, a) => (k.endsWith("hangar") ? "in the hangar" : k.endsWith("centre") ? "home" : k.endsWith("home") ? `home column ${a?.n}` : k.endsWith("launch") ? "on the launch square" : k));
        g.setAttribute("aria-label", `${colourName(b, p.seat)} plane ${p.index}, ${/^\d+$/.test(where) ? "on square " + where : where}${m ? ": movable" : ""}`);
        if (m) {
          g.setAttribute("role", "button");
          g.setAttribute("tabindex", "0");
        } else {
          g.removeAttribute("role");
          g.removeAttribute("tabindex");
        }
      });
    }
    for (const [key, g] of this.#planes) {
      if (!seen.has(key)) {
        g.remove();
        this.#planes.delete(key);
      }
    }
    // Where the playable moves end: a target to click.
    this.#marks.replaceChildren();
    const moves = (pick?.moves ?? []).filter((mv) => mv.kind !== ap.MoveKind.PASS && mv.preview && (chosen === undefined || mv.plane === chosen));
    const targets = new Map<number, number[]>();
    for (const mv of moves) {
      const sq = b.squares[b.seats[pick!.seat]?.path[mv.preview!.to + 1] ?? -1];
      if (!sq) continue;
      const list = targets.get(sq.index) ?? [];
      list.push(pick!.moves.indexOf(mv));
      targets.set(sq.index, list);
    }
    for (const [i, idx] of targets) {
      const sq = b.squares[i];
      // The ring shows the square; the target around it is a finger wide
      // at a phone's scale.
      this.#marks.append(s("circle", { class: "target-ring", cx: X(sq), cy: Y(sq), r: 0.75 * S, "aria-hidden": "true" }),
        s("circle", { class: "target", cx: X(sq), cy: Y(sq), r: 1.25 * S, "data-moves": idx.join(" ") }));
    }
    const pv = pick?.preview?.preview;
    if (pv && pick) {
      const path = b.seats[pick.seat]?.path ?? [];
      const pts = [pv.from, ...pv.path].map((p) => b.squares[path[p + 1]]).filter((q) => q);
      this.#marks.append(s("polyline", { class: "path", points: pts.map((q) => `${X(q)},${Y(q)}`).join(" ") }));
    }
  }
}

// A hangar's four spots, and where planes sharing a square stand, in squares.
const SPOTS: [number, number][] = [[-0.6, -0.6], [0.6, -0.6], [-0.6, 0.6], [0.6, 0.6]];
const SHARE: [number, number][] = [[-0.25, -0.25], [0.25, 0.25], [0.25, -0.25], [-0.25, 0.25]];

// plane is a small aeroplane's outline centred on x,y, nose up.
function plane(x: number, y: number, r: number): string {
  const k = r / 10;
  const p = (a: number, b: number) => `${x + a * k},${y + b * k}`;
  return `M${p(0, -10)} L${p(1.6, -3)} L${p(10, 2)} L${p(10, 4)} L${p(1.6, 2)} L${p(1.2, 7)} L${p(4, 9)} L${p(4, 10)} L${p(0, 9)} L${p(-4, 10)} L${p(-4, 9)} L${p(-1.2, 7)} L${p(-1.6, 2)} L${p(-10, 4)} L${p(-10, 2)} L${p(-1.6, -3)} Z`;
}

/** dieFace draws a die showing n (0: blank) as an svg. */
export function dieFace(n: number): SVGElement {
  const pips: Record<number, [number, number][]> = {
    1: [[2, 2]],
    2: [[1, 1], [3, 3]],
    3: [[1, 1], [2, 2], [3, 3]],
    4: [[1, 1], [3, 1], [1, 3], [3, 3]],
    5: [[1, 1], [3, 1], [2, 2], [1, 3], [3, 3]],
    6: [[1, 1], [3, 1], [1, 2], [3, 2], [1, 3], [3, 3]],
  };
  const svg = s("svg", { viewBox: "0 0 40 40", class: "die-face", "aria-hidden": "true" });
  svg.append(s("rect", { x: 2, y: 2, width: 36, height: 36, rx: 8, class: "die-body" }));
  for (const [a, b] of pips[n] ?? []) svg.append(s("circle", { cx: a * 10, cy: b * 10, r: 3.6, class: "pip" }));
  return svg;
}
