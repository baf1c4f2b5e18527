// The phrasebook the terminal client speaks too: phrase/phrases.json, read
// by Go's package phrase and bundled here, so both clients tell what just
// happened in the same words.
import book from "../../../phrase/phrases.json";

const phrases: Record<string, string> = book;

/**
 * say fills the phrase named key with args: say("aeroplane.rolled", { who:
 * "Red", die: 6 }) is "Red rolls 6". A place without a value stays as
 * written, and a key the phrasebook lacks comes back as itself (as in Go).
 */
export function say(key: string, args: Record<string, string | number> = {}): string {
  const p = phrases[key];
  if (p === undefined) return key;
  return p.replace(/\{(\w+)\}/g, (m, n: string) => (n in args ? String(args[n]) : m));
}

/** sentence gives a phrase its capital letter, for a line on its own. */
export function sentence(text: string): string {
  return text ? text[0].toUpperCase() + text.slice(1) : text;
}
