// The player's calendar: the card on their own page with their time zone
// and vacations. The server keeps the calendar and decides what a
// weekend or a vacation pauses (docs/time-controls.md, "Weekends and
// vacations"); the card shows it and asks for changes.

import { timestampDate } from "@bufbuild/protobuf/wkt";
import { HangarError, newRequestId, v1, type Session } from "../../../sdk/typescript/src/index.js";
import { h } from "./dom.js";

/** zones are the time zones the browser knows, its own among them. */
export function zones(own: string): string[] {
  const all = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return all.includes(own) ? all : [own, ...all];
}

/** refusal is a server's refusal as text: its reason and message. */
export function refusal(err: unknown): string {
  const e = HangarError.from(err);
  return e.reason ? `${e.reason}: ${e.rawMessage || e.message}` : e.rawMessage || e.message;
}

/** vacationText is a calendar's allowance and running vacation in words. */
export function vacationText(c: v1.Calendar, now: Date): string {
  const left = Math.max(0, c.daysAllowed - c.daysUsed);
  const allowance = `${left} of ${c.daysAllowed} vacation day${c.daysAllowed === 1 ? "" : "s"} left this year.`;
  const v = c.vacation;
  if (!v?.endTime || timestampDate(v.endTime) <= now) return allowance;
  return `On vacation until ${timestampDate(v.endTime).toLocaleString()} (${v.days} day${v.days === 1 ? "" : "s"}). ${allowance}`;
}

/**
 * calendarCard is the card of the signed-in player's calendar: the time
 * zone (a select of the browser's zones, saved with SetTimeZone), the
 * vacation days left and a running vacation, with buttons to start a
 * vacation of some days and to end one. A refusal shows as text in the card.
 */
export function calendarCard(session: Session): HTMLElement {
  const cal = session.calendar;
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  const zone = h("select", { id: "time-zone", name: "time-zone" }, zones(own).map((z) => h("option", { value: z }, z)));
  const days = h("input", { id: "vacation-days", type: "number", min: 1, max: 365, step: 1, value: 1, inputmode: "numeric" });
  const status = h("p", { id: "vacation-status", role: "status" });
  const note = h("p", { id: "calendar-error", class: "error", role: "alert" });
  const end = h("button", { id: "vacation-end", type: "button" }, "End my vacation");
  const card = h("section", { class: "card", id: "calendar", "aria-labelledby": "h-calendar" },
    h("h2", { id: "h-calendar" }, "Calendar"),
    h("p", { class: "small" }, "A match that pauses on weekends stops your clock from Saturday to Monday in your time zone; a vacation stops it in all your matches."),
    h("label", { for: "time-zone" }, "Your time zone"), zone,
    h("button", { id: "time-zone-save", type: "button", onclick: () => call(() => cal.setTimeZone({ timeZone: zone.value })) }, "Save the time zone"),
    status,
    h("label", { for: "vacation-days" }, "Days of vacation"), days,
    h("div", { class: "row" },
      h("button", { id: "vacation-start", type: "button", onclick: () => call(() => cal.startVacation({ days: Number(days.value), requestId: newRequestId() })) }, "Start a vacation"),
      end),
    note);
  end.addEventListener("click", () => call(() => cal.endVacation({})));
  const sync = () => {
    (card.querySelector("#vacation-start") as HTMLElement).textContent = `Start a vacation of ${days.value} day${days.value === "1" ? "" : "s"}`;
  };
  days.addEventListener("input", sync);
  sync();

  const show = (c: v1.Calendar | undefined) => {
    if (!c) return;
    // No zone saved yet: the select offers the browser's.
    if (c.timeZone && ![...zone.options].some((o) => o.value === c.timeZone)) zone.prepend(h("option", { value: c.timeZone }, c.timeZone));
    zone.value = c.timeZone || own;
    status.textContent = `${c.timeZone ? `Your time zone is ${c.timeZone}.` : `No time zone saved: the server counts weekends in UTC.`} ${vacationText(c, new Date())}`;
    end.hidden = !c.vacation?.endTime || timestampDate(c.vacation.endTime) <= new Date();
    card.dataset.loaded = String(Date.now());
  };
  async function call(f: () => Promise<{ calendar?: v1.Calendar }>): Promise<void> {
    try {
      show((await f()).calendar);
      note.textContent = "";
    } catch (err) {
      note.textContent = refusal(err);
    }
  }
  call(() => cal.getCalendar({}));
  return card;
}
