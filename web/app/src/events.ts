// What just happened, in the phrasebook's words: one line per event.

import type { Message } from "@bufbuild/protobuf";
import { aeroplane as ap, carcassonne as cc, gameEvent, v1 } from "../../../sdk/typescript/src/index.js";
import { colourName as apColour, position } from "./aeroplane.js";
import { colourName as ccColour, featureKey } from "./carcassonne.js";
import { say } from "./phrase.js";

/** Context is what naming seats needs: the match's game, its board and title. */
export interface Context {
  kind: "aeroplane" | "carcassonne" | "other";
  title: string;
  board?: ap.Board;
  startPhase?: boolean; // the last WatchMatchResponse's phase was "start"
  offers?: Map<string, v1.OfferKind>; // the kind of each offer made, by id
}

const title = (x: string) => x.charAt(0).toUpperCase() + x.slice(1);

/** seatName is a seat's colour, as the terminal client names it: "Red". */
export function seatName(ctx: Context, seat: number): string {
  if (ctx.kind === "aeroplane") return title(apColour(ctx.board, seat));
  if (ctx.kind === "carcassonne") return title(ccColour(seat));
  return `Seat ${seat}`;
}

function planeList(ctx: Context, refs: ap.PlaneRef[]): string {
  const bySeat = new Map<number, number[]>();
  for (const r of refs) bySeat.set(r.seat, [...(bySeat.get(r.seat) ?? []), r.index]);
  return [...bySeat.keys()].sort((a, b) => a - b).map((seat) => `${seatName(ctx, seat)} ${bySeat.get(seat)!.join("+")}`).join(", ");
}

/** describe is one event in words. */
export function describe(ev: v1.Event, ctx: Context, statusName: (s: v1.MatchStatus) => string): string {
  const b = ev.body;
  switch (b.case) {
    case "matchCreated":
      return say("match.created", { game: ctx.title, seats: b.value.seatCount });
    case "playerJoined":
      return say(b.value.bot ? "match.joined.bot" : "match.joined", { who: b.value.displayName, seat: b.value.seat, seatName: seatName(ctx, b.value.seat) });
    case "playerLeft":
      return b.value.forfeited ? say("match.forfeited", { seatName: seatName(ctx, b.value.seat) }) : say("match.left", { seat: b.value.seat });
    case "matchStarted":
      return say("match.started", { seats: b.value.seats.map((x) => seatName(ctx, x)).join(", ") });
    case "matchEnded":
      if (b.value.reason !== "") return say("match.ended.operator", { reason: b.value.reason });
      return b.value.status === v1.MatchStatus.FINISHED ? say("match.over") : say("match.ended", { status: statusName(b.value.status) });
    case "turnTimedOut":
      return say("match.timed_out", { seatName: seatName(ctx, b.value.seat), count: b.value.consecutive });
    case "seatHandedToBot":
      return say("match.handed_to_bot", { seatName: seatName(ctx, b.value.seat) });
    case "playersInvited":
      return say("match.invited", { count: b.value.playerIds.length });
    case "inviteCodeCreated":
      return say("match.invite_code");
    case "inviteCodeRevoked":
      return say("match.invite_revoked");
    case "invitationAccepted":
      return say("match.invitation_accepted");
    case "invitationDeclined":
      return say("match.invitation_declined");
    case "offerMade": {
      const o = b.value.offer;
      if (o) ctx.offers?.set(o.offerId, o.kind);
      return say("offer.made", { who: seatName(ctx, o?.seat ?? 0), kind: offerKind(o?.kind) });
    }
    case "offerAnswered":
      return say(b.value.accepted ? "offer.accepted" : "offer.declined", { who: seatName(ctx, b.value.seat), kind: offerKind(ctx.offers?.get(b.value.offerId)) });
    case "offerLapsed":
      return say("offer.lapsed", { kind: offerKind(ctx.offers?.get(b.value.offerId)), reason: LAPSE[b.value.reason] ?? "" });
    case "movesTakenBack":
      return say("offer.taken_back", { n: String(b.value.fromSeq) });
    case "rematchStarted":
      return say("offer.rematch");
    case "game": {
      const m = gameEvent(ev);
      if (m?.$typeName === "hangar.aeroplane.v1.Event") return aeroplaneEvent(m as ap.Event, ctx);
      if (m?.$typeName === "hangar.carcassonne.v1.Event") return carcassonneEvent(m as cc.Event, ctx);
      return (m as Message & { notation?: string })?.notation || say("match.unknown");
    }
  }
  return say("match.unknown");
}

/** offerKind is an offer's kind with its article: "a draw". */
export function offerKind(k: v1.OfferKind | undefined): string {
  switch (k) {
    case v1.OfferKind.DRAW: return "a draw";
    case v1.OfferKind.ABORT: return "an abort";
    case v1.OfferKind.TAKEBACK: return "a takeback";
    case v1.OfferKind.REMATCH: return "a rematch";
  }
  return "an offer";
}

const LAPSE: Partial<Record<v1.OfferLapseReason, string>> = {
  [v1.OfferLapseReason.MAKER_MOVED]: "its maker moved",
  [v1.OfferLapseReason.TURN_PASSED]: "the turn passed",
  [v1.OfferLapseReason.MATCH_ENDED]: "the match ended",
  [v1.OfferLapseReason.SEAT_LEFT]: "a player left",
};

const AP: Partial<Record<ap.EventKind, string>> = {
  [ap.EventKind.PASSED]: "aeroplane.passed",
  [ap.EventKind.TOOK_OFF]: "aeroplane.took_off",
  [ap.EventKind.MOVED]: "aeroplane.moved",
  [ap.EventKind.JUMPED]: "aeroplane.jumped",
  [ap.EventKind.FLEW]: "aeroplane.flew",
  [ap.EventKind.STACKED]: "aeroplane.stacked",
  [ap.EventKind.FINISHED]: "aeroplane.finished",
  [ap.EventKind.PLACED]: "aeroplane.placed",
  [ap.EventKind.PENALTY]: "aeroplane.penalty",
  [ap.EventKind.TURN_PASSED]: "aeroplane.turn_passed",
  [ap.EventKind.GAME_OVER]: "aeroplane.game_over",
  [ap.EventKind.RESIGNED]: "aeroplane.resigned",
  [ap.EventKind.START_TIE]: "aeroplane.start_tie",
  [ap.EventKind.FIRST_PLAYER]: "aeroplane.first_player",
};

function aeroplaneEvent(e: ap.Event, ctx: Context): string {
  const names = (seats: number[]) => seats.map((x) => seatName(ctx, x)).join(", ");
  const args = {
    who: seatName(ctx, e.seat),
    planes: planeList(ctx, e.planes),
    die: e.die,
    from: position(e.from, say),
    to: position(e.to, say),
    place: e.place,
    next: seatName(ctx, e.nextSeat),
    ranking: names(e.ranking),
    seats: names(e.seats),
  };
  switch (e.kind) {
    case ap.EventKind.ROLLED:
      return say(ctx.startPhase || e.notation.includes("start") ? "aeroplane.rolled.start" : "aeroplane.rolled", args);
    case ap.EventKind.CAPTURED:
      return say(e.crossing ? "aeroplane.captured.crossing" : "aeroplane.captured", args);
  }
  const key = AP[e.kind];
  return key ? say(key, args) : e.notation;
}

const CC: Partial<Record<cc.EventKind, string>> = {
  [cc.EventKind.DREW]: "carcassonne.drew",
  [cc.EventKind.DISCARDED]: "carcassonne.discarded",
  [cc.EventKind.PLACED]: "carcassonne.placed",
  [cc.EventKind.DEPLOYED]: "carcassonne.deployed",
  [cc.EventKind.PASSED]: "carcassonne.passed",
  [cc.EventKind.FLEW]: "carcassonne.flew",
  [cc.EventKind.LANDED]: "carcassonne.landed",
  [cc.EventKind.RETURNED]: "carcassonne.returned",
  [cc.EventKind.NEXT_TURN]: "carcassonne.next_turn",
  [cc.EventKind.ENDED]: "carcassonne.ended",
};

function carcassonneEvent(e: cc.Event, ctx: Context): string {
  const args = {
    who: seatName(ctx, e.seat),
    tile: e.tile,
    at: `${e.x},${e.y}`,
    rotation: e.rotation,
    feature: e.feature,
    roll: e.roll,
    points: e.points,
    kind: say(featureKey(e.featureKind)),
  };
  if (e.kind === cc.EventKind.SCORED) return say(e.final ? "carcassonne.scored.final" : "carcassonne.scored", args);
  const key = CC[e.kind];
  return key ? say(key, args) : e.notation;
}
