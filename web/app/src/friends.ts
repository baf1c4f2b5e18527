// Friends and blocks: the friends page (#/friends) and the buttons on a
// player's page. The server keeps the lists, who is online and whose turn
// it is (docs/chat-and-friends.md); the page reads them again every few
// seconds while it is shown.

import { v1, type Session } from "../../../sdk/typescript/src/index.js";
import { h } from "./dom.js";

/** Social is what the signed-in player has with others, read from the four lists. */
export interface Social {
  friends: v1.Friend[];
  incoming: v1.FriendRequest[];
  outgoing: v1.FriendRequest[];
  blocks: v1.Friend[];
}

// all reads every page of a list.
async function all<T>(page: (token: string) => Promise<{ items: T[]; next: string }>): Promise<T[]> {
  const out: T[] = [];
  let token = "";
  do {
    const r = await page(token);
    out.push(...r.items);
    token = r.next;
  } while (token);
  return out;
}

/** social reads the signed-in player's friends, requests and blocks. */
export async function social(s: Session): Promise<Social> {
  const f = s.friends;
  const [friends, incoming, outgoing, blocks] = await Promise.all([
    all((t) => f.listFriends({ pageSize: 1000, pageToken: t }).then((r) => ({ items: r.friends, next: r.nextPageToken }))),
    all((t) => f.listFriendRequests({ incoming: true, pageSize: 1000, pageToken: t }).then((r) => ({ items: r.requests, next: r.nextPageToken }))),
    all((t) => f.listFriendRequests({ incoming: false, pageSize: 1000, pageToken: t }).then((r) => ({ items: r.requests, next: r.nextPageToken }))),
    all((t) => f.listBlocks({ pageSize: 1000, pageToken: t }).then((r) => ({ items: r.players, next: r.nextPageToken }))),
  ]);
  return { friends, incoming, outgoing, blocks };
}

/** Relation is where the signed-in player stands with one other. */
export type Relation = "none" | "friend" | "asked" | "asking" | "blocked";

/** relation is where the signed-in player stands with player id. */
export function relation(x: Social, id: string): Relation {
  if (x.blocks.some((b) => b.playerId === id)) return "blocked";
  if (x.friends.some((f) => f.playerId === id)) return "friend";
  if (x.outgoing.some((r) => r.toPlayerId === id)) return "asked";
  if (x.incoming.some((r) => r.fromPlayerId === id)) return "asking";
  return "none";
}

/** Deps are what the views need of the page. */
export interface Deps {
  session: Session;
  nameOf: (playerId: string) => Promise<string>;
  showError: (err: unknown) => void;
}

/**
 * relationButtons are the buttons of a player's page for player id: ask to
 * be friends (or answer, or take the request back, or end the friendship),
 * and block or unblock. done runs after a change.
 */
export function relationButtons(d: Deps, x: Social, id: string, done: () => void): HTMLElement {
  const f = d.session.friends;
  const act = (call: () => Promise<unknown>) => async () => {
    try {
      await call();
      d.showError(undefined);
    } catch (err) {
      d.showError(err);
    }
    done();
  };
  const rel = relation(x, id);
  const row = h("div", { class: "row", id: "relation", "data-relation": rel });
  if (rel === "none") row.append(h("button", { id: "friend-add", class: "primary", onclick: act(() => f.sendFriendRequest({ playerId: id })) }, "Add as a friend"));
  if (rel === "asked") row.append(h("span", { class: "badge" }, "Friend request sent"), h("button", { id: "friend-cancel", onclick: act(() => f.cancelFriendRequest({ playerId: id })) }, "Take the request back"));
  if (rel === "asking") row.append(
    h("button", { id: "friend-accept", class: "primary", onclick: act(() => f.answerFriendRequest({ playerId: id, accept: true })) }, "Accept the friend request"),
    h("button", { id: "friend-decline", onclick: act(() => f.answerFriendRequest({ playerId: id, accept: false })) }, "Decline"));
  if (rel === "friend") row.append(h("span", { class: "badge" }, "Friend"), h("button", { id: "friend-remove", onclick: act(() => f.removeFriend({ playerId: id })) }, "Remove from friends"));
  if (rel === "blocked") row.append(h("span", { class: "badge" }, "Blocked"), h("button", { id: "unblock", onclick: act(() => f.unblockPlayer({ playerId: id })) }, "Unblock"));
  else row.append(h("button", {
    id: "block", onclick: () => {
      if (confirm("Block this player? You are never matched with each other, neither can invite the other, and you no longer see their chat.")) act(() => f.blockPlayer({ playerId: id }))();
    },
  }, "Block"));
  return row;
}

/**
 * friendsView fills box with the friends page: the friends (online or not,
 * and the matches where it is their turn), the requests both ways, the
 * blocked players, and a field to ask a player by id or by the address
 * of their page. It reads the lists again every five seconds until stop.
 */
export function friendsView(d: Deps, box: HTMLElement, signal: AbortSignal): void {
  const f = d.session.friends;
  const body = h("div", {}, h("p", {}, "Loading…"));
  const who = h("input", { id: "friend-id", name: "friend", autocomplete: "off", "aria-describedby": "friend-help" });
  const form = h("form", {
    id: "friend-form", class: "card",
    onsubmit: async (e: Event) => {
      e.preventDefault();
      const id = playerIdOf(who.value);
      if (!id) return;
      try {
        const r = await f.sendFriendRequest({ playerId: id });
        who.value = "";
        d.showError(undefined);
        note.textContent = r.friends ? "You are friends now." : "Request sent.";
      } catch (err) {
        d.showError(err);
      }
      load();
    },
  },
  h("h2", {}, "Add a friend"),
  h("label", { for: "friend-id" }, "Player id, or the address of their page"),
  h("p", { id: "friend-help", class: "small" }, "Open a player's page from a match or a leaderboard and press “Add as a friend”, or paste its address here."),
  who,
  h("button", { id: "friend-send", type: "submit" }, "Send a friend request"));
  const note = h("p", { class: "small", role: "status", id: "friend-note" });
  box.replaceChildren(h("section", { class: "card", id: "friends", "aria-labelledby": "h-friends" }, h("h1", { id: "h-friends" }, "Friends"), body), form, note);

  const act = (call: () => Promise<unknown>) => async () => {
    try {
      await call();
      d.showError(undefined);
    } catch (err) {
      d.showError(err);
    }
    load();
  };
  const person = (id: string, name: string) => h("a", { href: `#/player/${encodeURIComponent(id)}`, class: "row-main" }, h("strong", {}, name));

  async function load(): Promise<void> {
    if (signal.aborted) return;
    try {
      const x = await social(d.session);
      const names = new Map(await Promise.all([...x.incoming.map((r) => r.fromPlayerId), ...x.outgoing.map((r) => r.toPlayerId)]
        .map(async (id) => [id, await d.nameOf(id).catch(() => id)] as const)));
      if (signal.aborted) return;
      body.replaceChildren(
        h("h2", {}, "Your friends"),
        x.friends.length
          ? h("ul", { class: "matches", id: "friend-list" }, x.friends.map((fr) => h("li", { class: "match-row", "data-player": fr.playerId, "data-online": String(fr.online) },
            person(fr.playerId, fr.displayName),
            h("span", { class: "badge" + (fr.online ? " online" : "") }, fr.online ? "Online" : "Offline"),
            ...fr.turnMatchIds.map((m, i) => h("a", { class: "button turn-match", href: `#/match/${encodeURIComponent(m)}`, "data-match": m }, `Their turn${fr.turnMatchIds.length > 1 ? ` (${i + 1})` : ""}: watch`)),
            h("button", { class: "remove", onclick: act(() => f.removeFriend({ playerId: fr.playerId })) }, "Remove"))))
          : h("p", { class: "empty" }, "No friends yet."),
        h("h2", {}, "Requests to you"),
        x.incoming.length
          ? h("ul", { class: "matches", id: "incoming" }, x.incoming.map((r) => h("li", { class: "match-row", "data-player": r.fromPlayerId },
            person(r.fromPlayerId, names.get(r.fromPlayerId) ?? r.fromPlayerId),
            h("button", { class: "accept primary", onclick: act(() => f.answerFriendRequest({ playerId: r.fromPlayerId, accept: true })) }, "Accept"),
            h("button", { class: "decline", onclick: act(() => f.answerFriendRequest({ playerId: r.fromPlayerId, accept: false })) }, "Decline"))))
          : h("p", { class: "empty" }, "None."),
        h("h2", {}, "Your requests"),
        x.outgoing.length
          ? h("ul", { class: "matches", id: "outgoing" }, x.outgoing.map((r) => h("li", { class: "match-row", "data-player": r.toPlayerId },
            person(r.toPlayerId, names.get(r.toPlayerId) ?? r.toPlayerId),
            h("button", { class: "cancel", onclick: act(() => f.cancelFriendRequest({ playerId: r.toPlayerId })) }, "Take back"))))
          : h("p", { class: "empty" }, "None."),
        h("h2", {}, "Blocked players"),
        x.blocks.length
          ? h("ul", { class: "matches", id: "blocks" }, x.blocks.map((b) => h("li", { class: "match-row", "data-player": b.playerId },
            person(b.playerId, b.displayName),
            h("button", { class: "unblock", onclick: act(() => f.unblockPlayer({ playerId: b.playerId })) }, "Unblock"))))
          : h("p", { class: "empty" }, "None."));
      box.dataset.loaded = String(Date.now());
    } catch (err) {
      d.showError(err);
    }
  }
  load();
  const timer = window.setInterval(load, 5000);
  signal.addEventListener("abort", () => clearInterval(timer));
}

/** playerIdOf is the player id in what was typed: an id, or a player page's address. */
export function playerIdOf(typed: string): string {
  const t = typed.trim();
  const m = /#\/player\/([^/?#\s]+)/.exec(t);
  return m ? decodeURIComponent(m[1]) : t;
}
