import { test } from 'node:test';
import assert from 'node:assert/strict';
import { excerptAround, ghost, markdownIssue, writeMarkdown } from '../../../src/core/export/markdown';
import { prepareRepro } from '../../../src/core/export/repro';
import { brokenKimiCapture } from '../../fixtures/export/captures';

const SECTION_END = '<|tool_calls_section_end|>';

/** Contents of every fenced block of a Markdown text. */
function fences(md: string): string[] {
  return [...md.matchAll(/^(`{3,})[^\n]*\n([\s\S]*?)\n\1$/gm)].map((m) => m[2]);
}

test('the excerpt shows the markers as sent and where the section end is missing', () => {
  const r = prepareRepro(brokenKimiCapture());
  const { body } = markdownIssue(r);
  const excerpt = fences(body)[0];
  assert.ok(excerpt.includes('<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>'));
  // The ghost stands right after the last call's end marker: that is where the section end belongs.
  assert.ok(excerpt.includes(`{"filePath": "/repo/app.ts"}<|tool_call_end|>${ghost(SECTION_END)}`), excerpt);
  // And the marker itself appears nowhere else in the excerpt: it really is missing.
  assert.equal(excerpt.split(SECTION_END).length, 2);
});

test('the issue body has environment, stream tail, expected vs actual, findings with why, and the reproduce commands', () => {
  const r = prepareRepro(brokenKimiCapture(), { tokenscopeVersion: '0.1.0' });
  const { title, body } = markdownIssue(r);
  assert.equal(title, 'Tool-call section never closed — moonshotai/kimi-k2-0905 (Chutes via OpenRouter)');
  assert.match(body, /\| Agent \| opencode 0\.15\.2/);
  assert.match(body, /\| Provider served \| Chutes \(through OpenRouter\)/);
  assert.match(body, /\| Finish reason \| `stop` \(native `stop`\)/);
  const tail = fences(body)[1];
  assert.match(tail, /"finish_reason":"stop"/);
  assert.match(tail, /data: \[DONE\]$/);
  assert.match(
    body,
    /\*\*Expected:\*\* `<\|tool_calls_section_end\|>` at offset \d+, closing what opened at offset \d+; the tool call delivered to the agent with finish_reason `tool_calls`\./,
  );
  assert.match(
    body,
    /\*\*Actual:\*\* .*never closed.* The response finished with `stop`; 0 of 1 tool call the model wrote reached the agent/,
  );
  for (const rule of ['section-unclosed', 'markup-in-content', 'finish-reason-mismatch'])
    assert.match(body, new RegExp(`\\| error \\| \`${rule}\` \\|`));
  assert.match(body, /Parsers that require the section end/);
  assert.match(body, /curl -sS -N -X POST 'https:\/\/openrouter\.ai\/api\/v1\/chat\/completions'/);
  assert.match(body, /tokenscope rerun ID --target openrouter:chutes/);
  assert.ok(writeMarkdown(r).startsWith(`## ${title.replace(/</g, '&lt;')}`));
});

test('model output cannot break out of its fence or inject HTML', () => {
  const c = brokenKimiCapture();
  const evil = 'I will read the file.';
  const payload = '````\\n<img src=x onerror=alert(1)>\\n````';
  const text = new TextDecoder().decode(c.responseBody).replace(evil, payload);
  const body = new TextEncoder().encode(text);
  const r = prepareRepro({ ...c, responseBody: body, chunks: [{ t: 1, offset: 0, length: body.length }] });
  const md = writeMarkdown(r);
  const excerpt = fences(md)[0];
  assert.ok(excerpt.includes('<img src=x onerror=alert(1)>'), 'the output is shown verbatim inside the fence');
  // Outside fences and code spans, no raw tag appears.
  const prose = md.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1$/gm, '').replace(/`[^`\n]*`/g, '');
  assert.ok(!/<img/i.test(prose), prose);
});

test('excerpts stay small on long outputs and say where they were cut', () => {
  const text = `${'lorem ipsum '.repeat(400)}<|tool_calls_section_begin|>x${' tail'.repeat(400)}`;
  const at = text.indexOf('<|tool_calls');
  const e = excerptAround(text, {
    rule: 'r',
    severity: 'error',
    message: 'm',
    location: 'content',
    start: at,
    end: at + 29,
    expectedAt: at + 29,
    expectedMarker: SECTION_END,
  })!;
  assert.ok(e.text.length < 500, String(e.text.length));
  assert.ok(e.cutBefore && e.cutAfter);
  assert.ok(e.text.includes(`<|tool_calls_section_begin|>x${ghost(SECTION_END)}`));
  assert.equal(excerptAround(text, { rule: 'r', severity: 'error', message: 'm', location: 'wire' }), undefined);
});

test('a long failing section keeps its beginning and its end, the middle elided', () => {
  const calls = Array.from(
    { length: 60 },
    (_, i) => `<|tool_call_begin|>functions.read:${i}<|tool_call_argument_begin|>{"filePath": "src/file${i}.ts"}<|tool_call_end|>`,
  ).join('');
  const text = `Reading them all. <|tool_calls_section_begin|>${calls}<|im_end|>`;
  const begin = text.indexOf('<|tool_calls_section_begin|>');
  const missing = text.indexOf('<|im_end|>');
  const e = excerptAround(text, {
    rule: 'r',
    severity: 'error',
    message: 'm',
    location: 'content',
    start: begin,
    end: missing,
    expectedAt: missing,
    expectedMarker: SECTION_END,
  })!;
  assert.ok(e.text.length < 1200, String(e.text.length));
  assert.ok(e.text.startsWith('Reading them all. <|tool_calls_section_begin|><|tool_call_begin|>functions.read:0'));
  assert.match(e.text, /\n… \d+ characters …\n/);
  assert.ok(e.text.includes(`"src/file59.ts"}<|tool_call_end|>${ghost(SECTION_END)}<|im_end|>`));
});

test('the environment names the real upstream URL and counts reasoning tokens inside the completion', () => {
  const c = brokenKimiCapture();
  // As the proxy records it: the agent called /openrouter/v1/…, Tokenscope forwarded to OpenRouter's /api/v1/….
  c.exchange.path = '/openrouter/v1/chat/completions';
  c.exchange.upstreamUrl = 'https://openrouter.ai/api/v1/chat/completions?trace=1';
  const text = new TextDecoder()
    .decode(c.responseBody)
    .replace('"completion_tokens":42,', '"completion_tokens":42,"completion_tokens_details":{"reasoning_tokens":30},');
  const body = new TextEncoder().encode(text);
  const md = writeMarkdown(prepareRepro({ ...c, responseBody: body, chunks: [{ t: 1, offset: 0, length: body.length }] }));
  assert.match(md, /\| Upstream \| `POST openrouter\.ai\/api\/v1\/chat\/completions` → 200 \|/);
  assert.match(md, /\| Usage \| 120 prompt \+ 42 completion \(30 reasoning\) tokens, \$0\.0001 \|/);
});

test('an upstream error body: its own words are shown, the expectation is no finding, no "0 of 0 tool calls"', () => {
  const c = brokenKimiCapture();
  const error = JSON.stringify({
    error: { code: 502, message: 'Provider returned error', metadata: { provider_name: 'AtlasCloud', raw: '502 Service Unavailable' } },
  });
  const body = new TextEncoder().encode(error);
  c.exchange.status = 502;
  c.exchange.responseHeaders = { 'content-type': 'application/json' };
  c.exchange.servedProvider = 'AtlasCloud';
  const md = writeMarkdown(prepareRepro({ ...c, responseBody: body, chunks: [{ t: 1, offset: 0, length: body.length }] }));
  assert.match(md, /Response body \(HTTP 502\):\n\n```json\n.*"raw":"502 Service Unavailable"/);
  assert.match(md, /\*\*Expected:\*\* a well-formed response, on which Tokenscope's `upstream-error` check \(.+\) stays silent\./);
  const actual = /\*\*Actual:\*\* (.*)/.exec(md)![1];
  assert.ok(!/0 of 0 tool call/.test(actual), actual);
  assert.match(actual, /HTTP 502: Provider returned error \(provider AtlasCloud\)$/);
});

test('a provider name with control characters reaches the issue title and table escaped, not raw', () => {
  const c = brokenKimiCapture();
  const name = 'Evil\u001b[31mRED\u001b]0;x\u0007';
  const text = new TextDecoder().decode(c.responseBody).replaceAll('"Chutes"', JSON.stringify(name));
  const body = new TextEncoder().encode(text);
  const r = prepareRepro({
    ...c,
    exchange: { ...c.exchange, servedProvider: name },
    responseBody: body,
    chunks: [{ t: 1, offset: 0, length: body.length }],
  });
  const md = writeMarkdown(r);
  const head = md.split('\n')[0];
  const row = md.split('\n').find((l) => l.startsWith('| Provider served |'))!;
  assert.match(head, /Evil\\x1b\[31mRED\\x1b\]0;x\\x07 via OpenRouter/);
  assert.match(row, /\| Provider served \| Evil\\x1b\[31mRED\\x1b\]0;x\\x07 \(through OpenRouter\)/);
  assert.ok(!/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(head + row), JSON.stringify(head + row));
});
