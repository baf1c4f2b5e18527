// Small helpers to build the page's elements.

type Attrs = Record<string, unknown>;
type Child = Node | string | number | null | undefined | false | Child[];

function apply(e: Element, attrs: Attrs, children: Child[]): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") e.addEventListener(k.slice(2), v as EventListener);
    else if (k === "dataset") Object.assign((e as HTMLElement).dataset, v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  const add = (c: Child) => {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) c.forEach(add);
    else e.append(typeof c === "number" ? String(c) : c);
  };
  children.forEach(add);
}

/** h builds an HTML element: h("button", { class: "x", onclick: f }, "text"). */
export function h<K extends keyof HTMLElementTagNameMap>(name: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(name);
  apply(e, attrs, children);
  return e;
}

/** s builds an SVG element. */
export function s(name: string, attrs: Attrs = {}, ...children: Child[]): SVGElement {
  const e = document.createElementNS("http://www.w3.org/2000/svg", name) as SVGElement;
  apply(e, attrs, children);
  return e;
}
