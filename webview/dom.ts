/**
 * The only way the webview builds DOM. Children given as strings become Text nodes, attributes are set one by
 * one: model output can never be parsed as HTML, whatever it contains. There is deliberately no innerHTML here.
 */
export type Child = Node | string | number | false | null | undefined;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Record<string, string | number | boolean | undefined> | null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K];
export function h(
  tag: string,
  attrs?: Record<string, string | number | boolean | undefined> | null,
  ...children: (Child | Child[])[]
): HTMLElement;
export function h(
  tag: string,
  attrs: Record<string, string | number | boolean | undefined> | null = null,
  ...children: (Child | Child[])[]
): HTMLElement {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === false) continue;
      // Event handlers are attached with addEventListener by callers, never as attributes.
      if (/^on/i.test(k)) throw new Error(`refusing to set event attribute ${k}`);
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

/** A codicon (`<span class="codicon codicon-error">`). */
export function icon(name: string, extraClass = ''): HTMLElement {
  return h('span', { class: `codicon codicon-${name} ${extraClass}`.trim(), 'aria-hidden': 'true' });
}

/** Pretty JSON for display (as text). Strings that hold JSON documents are shown parsed. */
export function json(value: unknown): string {
  if (typeof value === 'string') {
    try {
      return JSON.stringify(JSON.parse(value), null, 2);
    } catch {
      return value;
    }
  }
  return JSON.stringify(value, null, 2) ?? String(value);
}
