/**
 * DOM building without HTML strings. Everything the explorer shows was written by a model or
 * taken from a corpus, so text only ever enters the page as text nodes (textContent), never as
 * markup: a `<script>` in a chunk stays the eleven characters it is.
 */
export type Child = Node | string | number | null | undefined | false | Child[];
type AttrValue = string | number | boolean | undefined | ((ev: Event) => void);

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, AttrValue> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = String(value);
    else if (key === 'value' && 'value' in el) (el as HTMLInputElement).value = String(value);
    else if (key === 'href') el.setAttribute('href', safeHref(String(value)));
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** Links are the app's own routes only: a data-made `javascript:` URL can never become one. */
function safeHref(href: string): string {
  return href.startsWith('#/') ? href : '#/';
}

export function clear(el: Element): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

export function fmt(x: unknown, digits = 3): string {
  if (typeof x !== 'number' || Number.isNaN(x)) return '—';
  const a = Math.abs(x);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return x.toExponential(2);
  if (Number.isInteger(x)) return String(x);
  return a >= 100 ? x.toFixed(1) : x.toFixed(digits);
}
