/**
 * The Parsed tab: what a correct parser of the model's family extracts from the text the model wrote (calls, content,
 * reasoning), side by side with what the provider returned as structured tool_calls; differences are highlighted.
 * Every string here is model or provider output: it is inserted as text only (dom.ts `h`), never as HTML.
 */
import { h, icon } from './dom';
import type { ExchangeView, ParsedCallView } from './protocol';

export function parsedPanel(x: ExchangeView): HTMLElement {
  const p = x.parsed;
  if (!p) return h('p', { class: 'notice' }, icon('info'), x.unavailable ?? 'This exchange is no model turn: there is nothing to parse.');
  return h(
    'div',
    { class: 'doc parsed' },
    h(
      'p',
      { class: 'muted parsed-source' },
      p.family ? `${p.family} parser. ` : 'Family unknown: the text is read as plain content. ',
      p.sourceText,
    ),
    p.mismatches.length
      ? h(
          'ul',
          { class: 'parsed-mismatches sev-error' },
          p.mismatches.map((m) => h('li', null, icon('error'), ' ', m)),
        )
      : p.provider && p.source !== 'reconstruction'
        ? h('p', { class: 'parsed-agree' }, icon('pass', 'sev-ok'), ' The provider returned exactly the calls in the model’s text.')
        : null,
    h(
      'div',
      { class: 'parsed-grid' },
      h(
        'section',
        { class: 'parsed-side', 'data-side': 'model' },
        h('h2', null, 'What the model wrote'),
        turn(p.reasoning, p.content, p.calls),
      ),
      h(
        'section',
        { class: 'parsed-side', 'data-side': 'provider' },
        h('h2', null, 'What the provider returned'),
        p.provider
          ? turn(p.provider.reasoning, p.provider.content, p.provider.calls)
          : h(
              'p',
              { class: 'notice' },
              icon('info'),
              'No provider parser ran: this is the raw model output, as an engine’s parser would receive it.',
            ),
      ),
    ),
  );
}

function turn(reasoning: string | undefined, content: string | undefined, calls: ParsedCallView[]): HTMLElement {
  return h(
    'div',
    null,
    h('h3', null, 'Reasoning'),
    reasoning ? h('pre', { class: 'reasoning' }, reasoning) : h('p', { class: 'muted' }, '(none)'),
    h('h3', null, 'Content'),
    content ? h('pre', { class: 'content' }, content) : h('p', { class: 'muted' }, '(empty)'),
    h('h3', null, `Tool calls (${calls.length})`),
    calls.length ? calls.map(callCard) : h('p', { class: 'muted' }, '(none)'),
  );
}

function callCard(c: ParsedCallView): HTMLElement {
  const flags = [
    c.mismatch ? h('span', { class: 'flag flag-mismatch' }, icon('error'), ' ', c.mismatch) : null,
    c.complete ? null : h('span', { class: 'flag flag-cut' }, icon('warning'), ' cut off'),
    c.argumentsPretty === undefined ? h('span', { class: 'flag flag-cut' }, 'arguments not JSON') : null,
  ];
  return h(
    'div',
    { class: `call-card${c.mismatch ? ' mismatch' : ''}`, 'data-call': c.index },
    h(
      'div',
      { class: 'role' },
      `#${c.index} `,
      h('code', null, c.name || '(no name)'),
      c.id ? ` · ${c.id}` : '',
      c.start !== undefined ? ` · [${c.start}–${c.end})` : '',
      ...flags,
    ),
    h('pre', null, c.argumentsPretty ?? c.arguments),
  );
}
