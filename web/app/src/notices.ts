// The player's notices: the lobby's card of the latest ones (your turn,
// reminders, starts and ends, invitations, offers, friend requests), kept
// current by a WatchPlayer stream. The notice log is the server's
// (NoticeService): the card shows its latest entries, newest first, and
// resumes after the last one shown when the stream drops.

import { timestampDate } from "@bufbuild/protobuf/wkt";
import { v1, type Session } from "../../../sdk/typescript/src/index.js";
import { clockText, ms } from "./clock.js";
import { h } from "./dom.js";
import { offerKind } from "./events.js";
import { resume } from "./resume.js";

/** SHOWN is how many notices the card keeps, the latest. */
export const SHOWN = 20;

/** FOLDED is how many of them show until the player asks for the rest. */
export const FOLDED = 5;

/** Deps are what the card needs from the page. */
export interface Deps {
  session: Session;
  /** titleOf is a game's title by its name. */
  titleOf: (game: string) => string;
  /** nameOf is a player's display name by id. */
  nameOf: (id: string) => Promise<string>;
  errorText: (err: unknown) => string;
  signal: AbortSignal;
}

const ordinal = (n: number) => n + (["th", "st", "nd", "rd"][n % 100 >> 3 ^ 1 && n % 10] || "th");

/**
 * noticeText is a notice in words, and where it leads (a match, the
 * friends page; empty: nowhere).
 */
export async function noticeText(d: Pick<Deps, "titleOf" | "nameOf">, n: v1.Notice, now: Date): Promise<{ text: string; href: string }> {
  const match = n.matchId ? `#/match/${n.matchId}` : "";
  const b = n.body;
  switch (b.case) {
    case "yourTurn": {
      const by = b.value.turnDeadline ? `: move within ${clockText(timestampDate(b.value.turnDeadline).getTime() - now.getTime())}` : "";
      return { text: `Your turn in ${d.titleOf(b.value.game)}${by}`, href: match };
    }
    case "reminder":
      return { text: `Reminder: ${clockText(ms(b.value.timeLeft))} left for your move in ${d.titleOf(b.value.game)}`, href: match };
    case "matchStarted":
      return { text: `${d.titleOf(b.value.game)} started`, href: match };
    case "matchEnded": {
      const e = b.value;
      let how = "ended";
      if (e.status === v1.MatchStatus.ABANDONED) how = "was abandoned";
      else if (e.forfeited) how = "ended: you had left it";
      else if (e.place) how = `ended: you placed ${ordinal(e.place)} of ${e.seats}`;
      return { text: `${d.titleOf(e.game)} ${how}`, href: `#/replay/${n.matchId}` };
    }
    case "invited":
      return { text: `${await d.nameOf(b.value.inviterId)} invited you to ${d.titleOf(b.value.game)}`, href: match };
    case "ticketMatched":
      return { text: "Matchmaking found you a match", href: match };
    case "offer":
      return { text: `${await d.nameOf(b.value.playerId)} offers ${offerKind(b.value.kind)} in ${d.titleOf(b.value.game)}`, href: match };
    case "friendRequest": {
      const f = b.value;
      return { text: f.accepted ? `${f.displayName} accepted your friend request` : `${f.displayName} asks to be your friend`, href: "#/friends" };
    }
  }
  return { text: "Something happened", href: match };
}

/**
 * noticesCard is the lobby's card of the player's latest notices: the last
 * SHOWN of the log, newest first (FOLDED of them until the player asks for
 * more), then each new one at the top as the
 * WatchPlayer stream brings it. A dropped stream is made again from the
 * last seq shown, after a back-off, so that a notice is neither missed nor
 * shown twice.
 */
export function noticesCard(d: Deps): HTMLElement {
  const list = h("ol", { id: "notices", class: "notices plain", "aria-live": "polite" });
  const empty = h("p", { class: "empty" }, "Loading…");
  const status = h("p", { class: "error", role: "alert" });
  // The latest FOLDED show; the button shows the rest of those kept.
  const more = h("button", { type: "button", id: "notices-more", class: "link", "aria-controls": "notices", "aria-expanded": "false", hidden: true });
  more.addEventListener("click", () => {
    const all = list.classList.toggle("all");
    more.setAttribute("aria-expanded", String(all));
    sync();
  });
  const sync = () => {
    const n = list.children.length;
    more.hidden = n <= FOLDED;
    more.textContent = list.classList.contains("all") ? "Show fewer" : `Show ${n - FOLDED} earlier`;
  };
  const card = h("section", { class: "card", id: "notices-card", "aria-labelledby": "h-notices" },
    h("h2", { id: "h-notices" }, "Notices"), empty, list, more, status);
  let last = 0;
  const show = async (ns: v1.Notice[]) => {
    for (const n of ns) {
      if (n.seq <= BigInt(last)) continue; // shown already
      last = Number(n.seq);
      const { text, href } = await noticeText(d, n, new Date());
      const when = n.time ? timestampDate(n.time) : undefined;
      const item = h("li", { "data-seq": last, "data-kind": n.body.case ?? "" },
        href ? h("a", { href }, text) : text,
        when ? h("time", { datetime: when.toISOString() }, when.toLocaleString([], { dateStyle: "short", timeStyle: "short" })) : null);
      list.prepend(item);
      while (list.children.length > SHOWN) list.lastElementChild!.remove();
    }
    sync();
    empty.hidden = list.children.length > 0;
    empty.textContent = "Nothing yet: your turns, reminders, invitations and friend requests show here.";
    card.dataset.last = String(last);
  };

  (async () => {
    try {
      // The latest SHOWN of the log: its length first, then its end.
      const head = await d.session.notices.listNotices({ pageSize: 1 }, { signal: d.signal });
      const from = head.latestSeq > BigInt(SHOWN) ? head.latestSeq - BigInt(SHOWN) : 0n;
      const page = await d.session.notices.listNotices({ afterSeq: from, pageSize: SHOWN }, { signal: d.signal });
      await show(page.notices);
      last = Math.max(last, Number(from));
      await show([]);
    } catch (err) {
      if (d.signal.aborted) return;
      status.textContent = d.errorText(err);
      return;
    }
    const err = await resume(d.signal,
      () => d.session.notices.watchPlayer({ afterSeq: BigInt(last) }, { signal: d.signal }),
      async (r) => { if (r.notice) await show([r.notice]); });
    if (err) status.textContent = d.errorText(err);
  })();
  return card;
}
