// A match's chat on its page: one channel (the players' for a seated
// player, the spectators' for everyone else), read live through WatchChat
// and resumed after a dropped stream from the last message shown, with
// mute and report. The server decides who may read and write which channel
// and hides a private match's chat from strangers (docs/chat-and-friends.md).

import { Code, HangarError, newRequestId, v1, type Session } from "../../../sdk/typescript/src/index.js";
import { h } from "./dom.js";
import { resume } from "./resume.js";

/** ChatOptions are what a chat panel needs of its match page. */
export interface ChatOptions {
  session: Session;
  matchId: string;
  /** channel is the channel shown: PLAYERS or SPECTATORS. */
  channel: v1.ChatChannel;
  /** me is the signed-in player's id: its messages take no mute or report. */
  me: string;
  /** nameOf is a player's display name. */
  nameOf: (playerId: string) => Promise<string>;
  /** errorText is an error in words. */
  errorText: (err: unknown) => string;
  signal: AbortSignal;
}

/**
 * next is the messages of a page or a stream that follow the last one
 * shown, in order: each message once however often a resumed stream sends
 * it. (A muted player's messages never come, so seq may skip numbers.)
 */
export function next(last: bigint, msgs: v1.ChatMessage[]): { last: bigint; fresh: v1.ChatMessage[] } {
  const fresh: v1.ChatMessage[] = [];
  for (const m of msgs) {
    if (m.seq <= last) continue;
    last = m.seq;
    fresh.push(m);
  }
  return { last, fresh };
}

/** chatPanel builds the chat of a match and starts reading it. */
export function chatPanel(o: ChatOptions): HTMLElement {
  const players = o.channel === v1.ChatChannel.PLAYERS;
  const title = players ? "Players' chat" : "Spectators' chat";
  const list = h("ol", { id: "chat-log", class: "chat-log", "aria-label": title, "aria-live": "polite", tabindex: 0 });
  const status = h("p", { id: "chat-error", class: "error", role: "alert" });
  const text = h("input", { id: "chat-text", name: "chat", maxlength: 500, autocomplete: "off", "aria-label": `Message to the ${players ? "players" : "spectators"}` });
  const muted = new Set<string>();
  let last = 0n;
  let requestId = newRequestId(); // kept until the message is posted: a retry posts once
  let sent = "";

  const form = h("form", {
    id: "chat-form", class: "chat-form",
    onsubmit: async (e: Event) => {
      e.preventDefault();
      const t = text.value.trim();
      if (!t) return;
      if (t !== sent) {
        sent = t;
        requestId = newRequestId();
      }
      try {
        const r = await o.session.chat.postChatMessage({ matchId: o.matchId, channel: o.channel, text: t, requestId });
        text.value = "";
        sent = "";
        status.textContent = "";
        if (r.message) await show([r.message]);
      } catch (err) {
        status.textContent = o.errorText(err);
      }
    },
  }, text, h("button", { id: "chat-send", type: "submit" }, "Send"));

  async function show(msgs: v1.ChatMessage[]): Promise<void> {
    const n = next(last, msgs);
    last = n.last;
    for (const m of n.fresh) {
      if (muted.has(m.authorId)) continue;
      list.append(await item(m));
    }
    list.scrollTop = list.scrollHeight;
  }

  async function item(m: v1.ChatMessage): Promise<HTMLElement> {
    const who = m.authorId === o.me ? "You" : await o.nameOf(m.authorId);
    const li = h("li", { "data-seq": String(m.seq), "data-author": m.authorId, class: m.authorId === o.me ? "mine" : "" },
      h("span", { class: "chat-line" }, h("strong", {}, who, ": "), m.text));
    if (m.authorId === o.me) return li;
    const actions = h("div", { class: "row chat-actions", hidden: true });
    const more = h("button", {
      class: "chat-more", "aria-expanded": "false", "aria-label": `Mute or report ${who}'s message`,
      onclick: () => {
        actions.hidden = !actions.hidden;
        more.setAttribute("aria-expanded", String(!actions.hidden));
      },
    }, "⋯");
    const reason = h("input", { class: "report-reason", maxlength: 500, "aria-label": "Why you report this message" });
    const report = h("form", {
      class: "row report", hidden: true,
      onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          await o.session.chat.reportChatMessage({ matchId: o.matchId, channel: m.channel, seq: m.seq, reason: reason.value.trim() });
          actions.replaceChildren(h("span", { class: "small", role: "status" }, "Reported: thank you."));
        } catch (err) {
          status.textContent = o.errorText(err);
        }
      },
    }, reason, h("button", { type: "submit", class: "report-send" }, "Send report"));
    actions.append(
      h("button", {
        class: "mute", onclick: async () => {
          try {
            await o.session.chat.muteChatPlayer({ matchId: o.matchId, playerId: m.authorId });
            muted.add(m.authorId);
            for (const x of list.querySelectorAll<HTMLElement>(`li[data-author="${CSS.escape(m.authorId)}"]`)) x.remove();
            status.textContent = "";
            note.textContent = `${who} is muted in this match.`;
          } catch (err) {
            status.textContent = o.errorText(err);
          }
        },
      }, `Mute ${who}`),
      h("button", { class: "report-open", onclick: () => { report.hidden = false; reason.focus(); } }, "Report"),
      report);
    li.append(more, actions);
    return li;
  }

  const note = h("p", { id: "chat-note", class: "small", role: "status" });
  const box = h("section", { id: "chat", class: "chat", "data-channel": players ? "players" : "spectators", "aria-labelledby": "chat-title" },
    h("h2", { id: "chat-title", class: "small" }, title), list, note, form, status);

  // The watch: stored messages after the last one shown, then live ones;
  // after a dropped stream, the same from the last one shown.
  (async () => {
    const err = await resume(o.signal,
      () => o.session.chat.watchChat({ matchId: o.matchId, channel: o.channel, afterSeq: last }, { signal: o.signal }),
      async (r) => {
        if (r.message) await show([r.message]);
        box.dataset.last = String(last);
      },
      () => { box.dataset.last = String(last); });
    if (err) {
      const e = HangarError.from(err);
      status.textContent = o.errorText(err);
      form.hidden = e.code === Code.PermissionDenied || e.code === Code.NotFound;
    }
  })();
  return box;
}
