// The native-scan marker searches (families/shared/text.ts `NeedleScan`, `TextIndex`, `findTruncated`; checks/scan.ts
// `findMarkers`; families/index.ts `detectFamily`) find exactly what the regex and `includes` searches they replace
// found, on random texts made of markers, pieces of markers and prose, short and long.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { findMarkers } from '../../../src/core/checks/scan';
import { unknownMarkup } from '../../../src/core/checks/unknown-markup';
import { analyzeWithContext } from '../../../src/core/analyze';
import { detectFamily, formats } from '../../../src/core/families/index';
import { findTruncated, requiredLiteral, scoreText, TextIndex, truncatedAt, withTextIndex } from '../../../src/core/families/shared/text';
import type { ModelFormat } from '../../../src/core/families/shared/format';
import { prng } from '../../helpers/prng';

const ALL_MARKERS = [...new Set(formats.flatMap((f) => [...f.markers, ...f.toolMarkers]))].filter((m) => m !== '');

/** A text of prose, markers, markers cut short and stray marker characters, `n` pieces long. */
function randomText(rand: () => number, n: number, markers: readonly string[] = ALL_MARKERS): string {
  const prose = [
    'The file ',
    'fun',
    'functools',
    'a < b ',
    '[x] ',
    ']',
    '〈',
    '｜',
    '日本語 ',
    'é',
    '\n',
    '  ',
    '<',
    '<|',
    '</',
    '{"name": "f"}',
    'DSML',
  ];
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rand();
    const m = markers[Math.floor(rand() * markers.length)];
    if (r < 0.25) s += m;
    else if (r < 0.45) s += m.slice(0, 1 + Math.floor(rand() * m.length));
    else s += prose[Math.floor(rand() * prose.length)];
  }
  return s;
}

/** findMarkers as it was: one global regex over every marker, longest first. */
function regexFindMarkers(text: string, from = 0, to = text.length): { marker: string; start: number; end: number; truncated: boolean }[] {
  const info = new Set(ALL_MARKERS);
  const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const sources = [...info]
    .sort((a, b) => b.length - a.length)
    .map((m) => (/[|｜]>$/.test(m) ? `${escapeRe(m.slice(0, -1))}>?` : escapeRe(m)));
  const re = new RegExp(sources.join('|'), 'g');
  const hits = [];
  re.lastIndex = from;
  for (let m = re.exec(text); m && m.index < to; m = re.exec(text)) {
    let s = m[0];
    if (m.index + s.length > to) break;
    const truncated = !info.has(s);
    if (truncated) s += '>';
    if (info.has(s)) hits.push({ marker: s, start: m.index, end: m.index + m[0].length, truncated });
  }
  return hits;
}

/** findTruncated as it was: a regex for the places where a marker may start cut short. */
function regexFindTruncated(text: string, markers: readonly string[], from: number, to: number, max = Infinity) {
  const hits: NonNullable<ReturnType<typeof truncatedAt>>[] = [];
  if (from >= to) return hits;
  const region = text.slice(from, to);
  const live = markers.filter((m) => m !== '');
  const charClass = (chars: string[]) =>
    `[${[...new Set(chars)].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}]`;
  const seconds = charClass(live.filter((m) => m.length > 1).map((m) => m[1]));
  const re = new RegExp(`${charClass(live.map((m) => m[0]))}(?=${seconds}|$)`, 'g');
  for (let m = re.exec(region); m; m = re.exec(region)) {
    const hit = truncatedAt(text, from + m.index, markers);
    if (!hit || hit.end > to) continue;
    if (hits.push(hit) >= max) break;
    re.lastIndex = hit.end - from;
  }
  return hits;
}

/** detectFamily's marker test as it was: `includes` per marker per family. */
function holdsOwnMarker(f: ModelFormat, text: string): boolean {
  if (f.markers.some((m) => text.includes(m)) || f.toolMarkers.some((m) => text.includes(m))) return true;
  if (!f.markerIds || !text.includes('<|reserved')) return false;
  for (const m of text.matchAll(/<\|reserved(?:_special)?_token_(\d+)\|>/g)) if (f.markerIds[Number(m[1])]) return true;
  return false;
}

function oldDetect(text: string): string | undefined {
  let best: ModelFormat | undefined;
  let bestScore = 0;
  for (const f of formats) {
    if (!f.markerless && !holdsOwnMarker(f, text)) continue;
    const score = f.detectText(text);
    if (score > bestScore) {
      best = f;
      bestScore = score;
    }
  }
  return best?.id;
}

/** unknown-markup.ts's scan as it was: one global regex over the segment. */
function oldUnknownMarkup(text: string, segments: readonly { kind: string; start: number; end: number }[]) {
  const SHAPES =
    /<\/?[|｜]\/?[A-Za-z_▁][\w▁.:-]{0,63}[|｜]>|<\/?[A-Za-z_][\w.-]{0,31}\|\/?[A-Za-z_][\w.:-]{0,63}>|<\|[A-Za-z_][\w.:-]{0,63}>|<\/?[A-Za-z_][\w.:-]{0,63}\|>|\[\/?[A-Z][A-Z0-9]*_[A-Z0-9_]+\]/g;
  const out = [];
  for (const segment of segments) {
    if (segment.kind !== 'content' && segment.kind !== 'reasoning') continue;
    const known = findMarkers(text, segment.start, segment.end);
    const isKnown = (s: number, e: number): boolean => known.some((k) => k.start < e && s < k.end);
    const seen: string[] = [];
    let start = -1;
    let end = -1;
    let callShaped = false;
    SHAPES.lastIndex = segment.start;
    for (let m = SHAPES.exec(text); m && m.index < segment.end; m = SHAPES.exec(text)) {
      const s = m.index;
      const e = s + m[0].length;
      if (e > segment.end || isKnown(s, e)) continue;
      if (start < 0) start = s;
      end = e;
      if (!seen.includes(m[0])) seen.push(m[0]);
      if (!callShaped && /^\s*[[{]\s*\{?\s*"(?:name|function|tool_name|tool)"\s*:/.test(text.slice(e, Math.min(segment.end, e + 200))))
        callShaped = true;
    }
    if (start >= 0) out.push({ region: segment.kind, start, end, seen, callShaped });
  }
  return out;
}

describe('native-scan marker searches', () => {
  test('unknown-markup finds the special-token shapes the one global regex found', () => {
    const shapes = [
      '<|zeta_call|>',
      '<｜call｜>',
      '<ifm|zeta>',
      '<|zeta>',
      '<zeta|>',
      '[ZETA_CALLS]',
      '[/MY_TAG]',
      '<div>',
      '[TODO]',
      '< |x|>',
      '<|',
      '[A_',
      ' {"name": "f"}',
      'prose ',
      '\n',
    ];
    let checked = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const rand = prng(seed);
      let text = seed % 10 === 0 ? 'p'.repeat(70_000) : '';
      for (let i = 0; i < 20; i++) text += shapes[Math.floor(rand() * shapes.length)];
      const { ctx } = analyzeWithContext({ nativeText: text });
      // A text some family's markers name is that family's, and not scanned for unknown markup.
      if (!ctx || ctx.format) continue;
      checked++;
      assert.deepEqual(unknownMarkup(ctx), oldUnknownMarkup(text, ctx.native.segments), `seed ${seed}`);
    }
    assert.ok(checked > 100, `${checked} texts of no family`);
  });

  test('findMarkers finds what the one global regex found, in whole texts and in ranges', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(seed);
      // Long texts use the indexed scans (over 64 K characters): a long prose prefix, then the random pieces.
      const text = (seed % 10 === 0 ? 'x'.repeat(70_000) : '') + randomText(rand, 5 + Math.floor(rand() * 60));
      assert.deepEqual(
        findMarkers(text).map(({ marker, start, end, truncated }) => ({ marker, start, end, truncated })),
        regexFindMarkers(text),
        `seed ${seed}`,
      );
      const from = Math.floor(rand() * text.length);
      const to = from + Math.floor(rand() * (text.length - from + 1));
      assert.deepEqual(
        findMarkers(text, from, to).map(({ marker, start, end, truncated }) => ({ marker, start, end, truncated })),
        regexFindMarkers(text, from, to),
        `seed ${seed} [${from}, ${to})`,
      );
    }
  });

  test('findTruncated finds what the regex of candidate places found, for each family and a marker list with letters', () => {
    const lists = [...formats.map((f) => f.markers), ['functools', 'fx', 'a', '<|x|>', '[TOOL_CALLS]', '｜>'], ['ab']];
    for (let seed = 1; seed <= 400; seed++) {
      const rand = prng(seed);
      const markers = lists[seed % lists.length];
      const text =
        (seed % 20 === 0 ? 'y'.repeat(70_000) : '') + randomText(rand, 3 + Math.floor(rand() * 40), markers.length ? markers : ['<x>']);
      const from = Math.floor(rand() * text.length);
      const to = rand() < 0.3 ? text.length : from + Math.floor(rand() * (text.length - from + 1));
      const max = rand() < 0.3 ? 1 : Infinity;
      assert.deepEqual(findTruncated(text, markers, from, to, max), regexFindTruncated(text, markers, from, to, max), `seed ${seed}`);
    }
  });

  test('TextIndex.indexOf is indexOf, whatever order the searches come in', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const rand = prng(seed);
      const markers = formats[seed % formats.length].markers.filter((m) => m !== '');
      const text = 'z'.repeat(66_000) + randomText(rand, 400, markers);
      const index = new TextIndex(text);
      for (let q = 0; q < 300; q++) {
        const s = rand() < 0.1 ? 'functools' : (markers[Math.floor(rand() * markers.length)] ?? '<');
        const from = rand() < 0.5 ? Math.floor(rand() * text.length) : text.length - Math.floor(rand() * 2000);
        assert.equal(index.indexOf(s, from), text.indexOf(s, from), `seed ${seed} ${s} from ${from}`);
      }
    }
  });

  test('detectFamily picks what one includes per marker per family picked', () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(seed);
      const family = formats[seed % formats.length];
      const own = [...family.markers, ...family.toolMarkers].filter((m) => m !== '');
      const text =
        randomText(rand, 1 + Math.floor(rand() * 12), own.length && rand() < 0.7 ? own : ALL_MARKERS) +
        (seed % 7 === 0 ? '<|reserved_token_163595|>' : '');
      assert.equal(detectFamily(undefined, text)?.format.id, oldDetect(text), `seed ${seed}: ${JSON.stringify(text.slice(0, 200))}`);
    }
  });

  test('in one shared index of a long text (withTextIndex), every search finds the same', () => {
    for (let seed = 1; seed <= 60; seed++) {
      const rand = prng(seed);
      const family = formats[seed % formats.length];
      const own = [...family.markers, ...family.toolMarkers].filter((m) => m !== '');
      // Long prose first (the indexed searches need 64 K characters), then markup, some of it cut short.
      const text = 'The file, café 日本語. '.repeat(4000) + randomText(rand, 40, own.length ? own : ALL_MARKERS);
      const from = Math.floor(rand() * text.length);
      const expected = {
        family: oldDetect(text),
        markers: regexFindMarkers(text),
        window: regexFindMarkers(text, 1000, text.length - 5),
        truncated: regexFindTruncated(text, family.markers, 0, text.length),
        tail: regexFindTruncated(text, family.markers, from, text.length),
        scores: formats.map((f) => f.detectText(text)),
      };
      const seen = withTextIndex(text, () => ({
        family: detectFamily(undefined, text)?.format.id,
        markers: findMarkers(text).map(({ marker, start, end, truncated }) => ({ marker, start, end, truncated })),
        window: findMarkers(text, 1000, text.length - 5).map(({ marker, start, end, truncated }) => ({ marker, start, end, truncated })),
        truncated: findTruncated(text, family.markers, 0, text.length),
        tail: findTruncated(text, family.markers, from, text.length),
        scores: formats.map((f) => f.detectText(text)),
      }));
      assert.deepEqual(seen, expected, `seed ${seed}`);
    }
  });

  test('scoreText skips a regex only when the text lacks a literal every match holds', () => {
    const sigs: [RegExp, number][] = [
      [/[|｜]\s*DSML\s*[|｜]/, 1],
      [/<\/?(?:\s*[|｜]){1,3}\s*DSML(?:\s*[|｜]){1,3}\s?(?:invoke|parameter)(?![A-Za-z_])/, 2],
      [/(?:^|[\s!.?:;,])\[\s*[A-Za-z_][\w.]*\s*\(\s*(?:\)|[A-Za-z_]\w*\s*=)/, 4],
      [/ab?c\.d+e{2}f/, 8],
      [/x😀?yz/u, 16],
      [/\u0041B\x43D/, 32],
      [/<tool_call>[^\s<{]/, 64],
      [/<\|python_tag\|>\s*\{/, 128],
      [/(?<![\w.])functions\.([\w.-]+):(\d+)\s*(?=\{)/, 256],
      [/^\s*\{\s*"name"/, 512],
      [/<\|end_of_text\|>|<\|(?:start|end)_of_role\|>/, 1024],
      [/[ab]+c|d[ef]?g/, 2048],
      [/[^a]xy/, 4096],
      [/[|｜]?zz/, 8192],
      // As the bundled CLI spells them (its build escapes non-ASCII characters).
      [/[|\uff5c] (?:calls|invoke)/, 16384],
      [/<\uff5cDSML\x7c?/, 32768],
      [/\u{1F600}+q/u, 65536],
    ];
    for (const [re] of sigs) assert.notEqual(requiredLiteral(re), undefined);
    assert.equal(requiredLiteral(sigs[0][0]), 'DSML');
    assert.equal(requiredLiteral(/<\uff5cDSML\x7c?/), '<｜DSML');
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(seed);
      const pieces = [
        '<｜DSML｜invoke',
        '| DSML |',
        ' [read(path="a")',
        'ac.ddeef',
        'abc.deef',
        'xyz',
        'x😀yz',
        'ABCD',
        'DSML',
        'prose ',
        '\n',
        '<tool_call>',
        '<tool_call>{',
        'x',
        '<|python_tag|> {',
        'functions.read:0 {',
        'a.functions.x:1{',
        '{"name"',
        '<|end_of_text|>',
        '<|start_of_role|>',
        '<|end_of_role',
        '| calls',
        '｜ invoke',
        'bbc',
        'dg',
        'deg',
        'axy',
        'bxy',
        'zz',
        '|zz',
        '<｜DSML|',
        '😀😀q',
      ];
      let text = seed % 5 === 0 ? 'z'.repeat(70_000) : '';
      for (let i = 0; i < 6; i++) text += pieces[Math.floor(rand() * pieces.length)];
      const expected = sigs.reduce((n, [re, w]) => n + (re.test(text) ? w : 0), 0);
      assert.equal(scoreText(text, sigs), expected, JSON.stringify(text.slice(-200)));
      assert.equal(
        withTextIndex(text, () => scoreText(text, sigs)),
        expected,
        JSON.stringify(text.slice(-200)),
      );
    }
  });
});
