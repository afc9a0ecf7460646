// Makes docs/images/broken-tool-call.png, the picture at the top of the README: what `tokenscope demo` and
// `tokenscope tokens` print for the demo's Kimi K2 tool-call section that never ends, drawn as a dark terminal.
//
//   npm run build && node scripts/readme-image.mjs [--tokenizer-dir DIR]
//
// The text is the CLI's own output, run here against the demo upstream (nothing leaves this machine); only the
// colours are added, from the token view's conventions. The Kimi K2 tokenizer comes from --tokenizer-dir, else from
// ../shared/tokenizers/kimi-k2 (or TOKENSCOPE_SHARED), else the Hugging Face Hub. The PNG is drawn with sharp, which
// the dev dependencies bring (through @qwen-code/qwen-code); it is not a dependency of Tokenscope itself.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = join(root, 'bin', 'tokenscope.js');
const out = join(root, 'docs', 'images', 'broken-tool-call.png');
const COLUMNS = 104;
const THEME = {
  background: '#1f1f1f',
  text: '#cccccc',
  dim: '#8b8b8b',
  prompt: '#73c991',
  special: '#4fc1ff',
  spelled: '#e2a45c',
  finding: '#f14c4c',
  rule: '#c586c0',
};

const flag = process.argv.indexOf('--tokenizer-dir');
const shared = process.env.TOKENSCOPE_SHARED ?? join(root, '..', 'shared');
const tokenizerDir =
  flag > 0 ? process.argv[flag + 1] : existsSync(join(shared, 'tokenizers', 'kimi-k2')) ? join(shared, 'tokenizers', 'kimi-k2') : undefined;

const data = mkdtempSync(join(tmpdir(), 'tokenscope-readme-image-'));
try {
  const demo = await runDemo(data);
  const id = /^ {4}(\w{14}) {2}/m.exec(
    demo
      .split('\n')
      .slice(demo.split('\n').findIndex((l) => l.startsWith('Replayed')))
      .join('\n'),
  )?.[1];
  if (!id) throw new Error(`no capture id in the demo's output:\n${demo}`);
  const tokens = spawnSync(
    process.execPath,
    [bin, 'tokens', id, '--data-dir', data, ...(tokenizerDir ? ['--tokenizer-dir', tokenizerDir] : [])],
    { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } },
  );
  if (tokens.status !== 0) throw new Error(`tokens failed: ${tokens.stderr}`);
  const demoLines = demo.split('\n');
  const first = demoLines.findIndex((l) => l.startsWith('Replayed'));
  const lines = [
    '$ tokenscope demo',
    demoLines[first].replace(/http:\/\/127\.0\.0\.1:\d+/, 'http://127.0.0.1:8719'),
    ...demoLines.slice(first + 1, first + 4),
    '  …',
    '',
    `$ tokenscope tokens ${id}${tokenizerDir ? ' --tokenizer-dir ~/kimi-k2' : ''}`,
    ...tokens.stdout
      .replaceAll(tokenizerDir ?? '\u0000', '~/kimi-k2')
      .trimEnd()
      .split('\n'),
  ].flatMap((l) => wrap(l, COLUMNS));
  mkdirSync(dirname(out), { recursive: true });
  const sharp = createRequire(import.meta.url)('sharp');
  const info = await sharp(Buffer.from(svg(lines)), { density: 144 })
    .png({ compressionLevel: 9, palette: true })
    .toFile(out);
  console.log(`readme-image: ${out} (${info.width}×${info.height}, ${Math.round(info.size / 1024)} kB)`);
} finally {
  rmSync(data, { recursive: true, force: true });
}

/** Runs `tokenscope demo` until it has replayed its exchanges; its output. */
function runDemo(dir) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, 'demo', '--port', '0', '--data-dir', dir], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, NO_COLOR: '1' },
    });
    let text = '';
    const timer = setTimeout(() => (child.kill('SIGKILL'), reject(new Error(`the demo did not finish in 120 s:\n${text}`))), 120_000);
    const look = (d) => {
      text += d;
      if (!text.includes('Serving the demo until Ctrl+C')) return;
      clearTimeout(timer);
      child.once('exit', () => resolve(text));
      child.kill('SIGINT');
    };
    child.stdout.on('data', look);
    child.stderr.on('data', (d) => (text += d));
  });
}

/** A line cut at spaces into rows of at most `width` columns, each row after the first indented like the line. */
function wrap(line, width) {
  if ([...line].length <= width) return [line];
  const indent = ' '.repeat(/^ */.exec(line)[0].length);
  const rows = [];
  let row = '';
  for (const word of line.trimStart().split(' ')) {
    const next = row ? `${row} ${word}` : `${indent}${word}`;
    if ([...next].length > width && row) {
      rows.push(row);
      row = `${indent}${word}`;
    } else row = next;
  }
  rows.push(row);
  return rows;
}

/** Coloured runs of one line: special tokens, markers spelled as text, findings, rules. */
function runs(line) {
  if (line.startsWith('$ '))
    return [
      { text: '$ ', colour: THEME.prompt },
      { text: line.slice(2), colour: '#ffffff', bold: true },
    ];
  const pattern =
    /(\[<[^\]]+>\]|\[x\])|(«[^»]*»)|(⟦#\d+⟧|⟨missing [^⟩]*⟩|\berror\b|\d+ findings? \(\d+ errors?\))|(\b(?:section-unclosed|markup-in-content|finish-reason-mismatch)\b)|(·|↵)|^(marker|reasoning|content|end|accounting:)(?= )/g;
  const parts = [];
  let at = 0;
  for (const m of line.matchAll(pattern)) {
    if (m.index > at) parts.push({ text: line.slice(at, m.index), colour: THEME.text });
    const colour = m[1] ? THEME.special : m[2] ? THEME.spelled : m[3] ? THEME.finding : m[4] ? THEME.rule : THEME.dim;
    parts.push({ text: m[0], colour, bold: Boolean(m[3] && m[0] === 'error') });
    at = m.index + m[0].length;
  }
  if (at < line.length) parts.push({ text: line.slice(at), colour: THEME.text });
  return parts;
}

/** The lines as an SVG terminal: every character in its own cell, so a glyph from a fallback font keeps the grid. */
function svg(lines) {
  // DejaVu Sans Mono (and most monospace fonts) advance 0.602 em per character: a run drawn from its column's x
  // stays on the grid; a character outside ASCII starts a run of its own, in case it comes from a fallback font.
  const size = 14;
  const cell = 0.60205 * size;
  const row = 19;
  const pad = 16;
  const width = Math.ceil(pad * 2 + COLUMNS * cell);
  const height = pad * 2 + 14 + lines.length * row;
  const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const body = lines
    .map((line, i) => {
      const y = pad + 14 + (i + 1) * row - 5;
      let col = 0;
      const spans = runs(line)
        .flatMap((r) =>
          r.text
            .split(/([^\x00-\x7f])/u)
            .filter(Boolean)
            .map((text) => ({ ...r, text })),
        )
        .map((r) => {
          const x = (pad + col * cell).toFixed(2);
          col += [...r.text].length;
          return r.text.trim() ? `<tspan x="${x}" fill="${r.colour}"${r.bold ? ' font-weight="bold"' : ''}>${esc(r.text)}</tspan>` : '';
        })
        .join('');
      return `<text y="${y}" xml:space="preserve">${spans}</text>`;
    })
    .join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">
<rect width="100%" height="100%" rx="8" fill="${THEME.background}"/>
<circle cx="${pad + 6}" cy="${pad}" r="5" fill="#ff5f57"/><circle cx="${pad + 24}" cy="${pad}" r="5" fill="#febc2e"/><circle cx="${pad + 42}" cy="${pad}" r="5" fill="#28c840"/>
<g font-family="DejaVu Sans Mono, Menlo, Consolas, monospace" font-size="${size}">
${body}
</g>
</svg>`;
}
