// A match's clocks: the time controls the lobby's form offers, and each
// seat's time as the match page shows it. No game rules: the server keeps
// the clocks (docs/time-controls.md); the page only counts down to
// Match.turn_deadline between reads.

import type { Duration } from "@bufbuild/protobuf/wkt";
import { v1 } from "../../../sdk/typescript/src/index.js";

/** ms is a Duration in milliseconds (0 when unset). */
export function ms(d: Duration | undefined): number {
  return d ? Number(d.seconds) * 1000 + Math.floor(d.nanos / 1e6) : 0;
}

/** duration is a whole number of seconds as a Duration. */
export function duration(seconds: number): Duration {
  return { $typeName: "google.protobuf.Duration", seconds: BigInt(Math.round(seconds)), nanos: 0 };
}

/**
 * clockText is a time left as a clock shows it: "4:05" under an hour,
 * "2h 05m" under a day, "3d 4h" beyond; never below "0:00".
 */
export function clockText(msLeft: number): string {
  const s = Math.max(0, Math.ceil(msLeft / 1000));
  const d = Math.floor(s / 86400);
  const hr = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${hr}h`;
  if (hr) return `${hr}h ${String(m).padStart(2, "0")}m`;
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

/**
 * Choice is what the lobby's form asks: a kind, minutes, seconds of
 * increment, a policy, whether the clock pauses on weekends, and the
 * reminders ("default": the server's; "none": none; else seconds before
 * the deadline, comma-separated).
 */
export interface Choice {
  kind: "none" | "per-move" | "increment" | "bank";
  minutes: number;
  incrementSeconds: number;
  policy: v1.TimeoutPolicy;
  pauseWeekends?: boolean;
  reminders?: string;
}

/** REMINDERS are the reminder choices the lobby's form offers, as Choice.reminders. */
export const REMINDERS: [string, string][] = [
  ["default", "The server's usual reminders"],
  ["none", "No reminders"],
  ["3600", "1 hour before"],
  ["3600,600", "1 hour and 10 minutes before"],
];

/**
 * correspondence reports whether a clock may pause on weekends: the server
 * allows it for a day or more per move or in the bank.
 */
export function correspondence(kind: Choice["kind"], minutes: number): boolean {
  return kind !== "none" && minutes >= 1440;
}

/** timeControl is the form's choice as CreateMatch's time_control (undefined: no clock). */
export function timeControl(c: Choice): v1.TimeControl | undefined {
  const base = {
    $typeName: "hangar.v1.TimeControl" as const,
    timeoutPolicy: c.policy,
    pauseWeekends: !!c.pauseWeekends && correspondence(c.kind, c.minutes),
    reminders: c.reminders && c.reminders !== "default" && c.reminders !== "none" ? c.reminders.split(",").map((s) => duration(Number(s))) : [],
    noReminders: c.reminders === "none",
  };
  const span = duration(c.minutes * 60);
  switch (c.kind) {
    case "per-move":
      return { ...base, kind: v1.TimeControlKind.PER_MOVE, perMove: span };
    case "increment":
      return { ...base, kind: v1.TimeControlKind.INCREMENT, initial: span, increment: duration(c.incrementSeconds) };
    case "bank":
      return { ...base, kind: v1.TimeControlKind.BANK, initial: span };
  }
  return undefined;
}

/** describeControl is a match's clock in words, or "" without one. */
export function describeControl(m: v1.Match): string {
  const tc = m.timeControl;
  const policy = tc ? POLICY[tc.timeoutPolicy] ?? "" : "";
  if (tc?.kind === v1.TimeControlKind.PER_MOVE) return `Clock: ${clockText(ms(tc.perMove))} per move; ${policy}${describeExtras(tc)}`;
  if (tc?.kind === v1.TimeControlKind.INCREMENT) return `Clock: ${clockText(ms(tc.initial))} + ${ms(tc.increment) / 1000} s per move; ${policy}${describeExtras(tc)}`;
  if (tc?.kind === v1.TimeControlKind.BANK) return `Clock: ${clockText(ms(tc.initial))} for the match; ${policy}${describeExtras(tc)}`;
  if (m.turnTime) return `Clock: ${clockText(ms(m.turnTime))} per turn`;
  return "";
}

/** describeExtras is a clock's weekend pause and reminders in words, or "". */
function describeExtras(tc: v1.TimeControl): string {
  const parts: string[] = [];
  if (tc.pauseWeekends) parts.push("paused on weekends");
  if (tc.noReminders) parts.push("no reminders");
  else if (tc.reminders.length) parts.push(`reminders ${tc.reminders.map((d) => clockText(ms(d))).join(" and ")} before the deadline`);
  return parts.length ? `; ${parts.join("; ")}` : "";
}

const POLICY: Partial<Record<v1.TimeoutPolicy, string>> = {
  [v1.TimeoutPolicy.UNSPECIFIED]: "out of time, the server plays the turn",
  [v1.TimeoutPolicy.SKIP]: "out of time, the server plays the turn",
  [v1.TimeoutPolicy.LOSE]: "out of time, the seat loses",
  [v1.TimeoutPolicy.BOT]: "out of time, a bot takes the seat",
  [v1.TimeoutPolicy.ABORT_IF_UNSTARTED]: "out of time before a first move aborts the match, later loses",
};

/**
 * seatClock is what a seat's clock shows at now (ms since the epoch): the
 * seat to act counts down to the turn's deadline; the others show the bank
 * they had when their turn ended. undefined: the match has no clock.
 */
export function seatClock(m: v1.Match, seat: v1.Seat, now: number): number | undefined {
  const clocked = !!m.timeControl || !!m.turnTime;
  if (!clocked) return undefined;
  const acting = m.status === v1.MatchStatus.ACTIVE && seat.seat === m.turnSeat && !!m.turnDeadline;
  if (acting) return Number(m.turnDeadline!.seconds) * 1000 + Math.floor(m.turnDeadline!.nanos / 1e6) - now;
  if (m.timeControl && m.timeControl.kind !== v1.TimeControlKind.PER_MOVE && seat.timeLeft) return ms(seat.timeLeft);
  return undefined;
}
