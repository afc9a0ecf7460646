/**
 * Repair mode per protocol: the record names its protocol and the summary speaks its words (tool_calls / tool_use
 * blocks / function_call items; finish_reason / stop_reason / status); Anthropic deliveries carry ids Anthropic's API
 * takes back, which the next turn's Kimi id rule reads as Kimi's numbering; Responses settles an `incomplete` turn
 * whose leaked call was whole as Chat settles finish_reason `length`.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import historyKimiIds from '../../../src/core/checks/history-kimi-ids';
import type { RepairRecord } from '../../../src/core/model';
import { AnthropicSseRepair, repairAnthropicBody } from '../../../src/core/repair/anthropic';
import { anthropicId } from '../../../src/core/repair/calls';
import { repairSummary } from '../../../src/core/repair/describe';
import { repairJsonBody } from '../../../src/core/repair/json';
import { repairPreview, previewsLine } from '../../../src/core/repair/preview';
import { repairResponsesBody, ResponsesSseRepair } from '../../../src/core/repair/responses';
import { SseRepair } from '../../../src/core/repair/sse';
import { normalizeRequest } from '../../../src/core/wire/request';
import { parseResponseBody } from '../../../src/core/wire/index';
import { response, run } from '../checks/helpers';
import { ctxFor, pieces, stream as chatStream } from './helpers';

const SB = '<|tool_calls_section_begin|>';
const CB = '<|tool_call_begin|>';
const AB = '<|tool_call_argument_begin|>';
const CE = '<|tool_call_end|>';
const ARGS = '{"path": "a.md", "content": "hi"}';
const LEAK = `I'll write it.${SB}${CB}functions.write:0${AB}${ARGS}${CE}`;
const CUT = `I'll write it.${SB}${CB}functions.write:0${AB}{"path": "a.md", "cont`;
const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/;

const kimi = (historyCalls = 0) => ctxFor('kimi-k2', { historyCalls });

/** An Anthropic Messages stream of one text block streamed in `deltas`. */
function anthropicStream(deltas: string[], stop = 'end_turn'): string {
  const ev = (o: Record<string, unknown>) => `event: ${o.type}\ndata: ${JSON.stringify(o)}\n\n`;
  return (
    ev({
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'kimi-k2',
        content: [],
        stop_reason: null,
        usage: { input_tokens: 5, output_tokens: 1 },
      },
    }) +
    ev({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) +
    deltas.map((d) => ev({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: d } })).join('') +
    ev({ type: 'content_block_stop', index: 0 }) +
    ev({ type: 'message_delta', delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 9 } }) +
    ev({ type: 'message_stop' })
  );
}

const anthropicBody = (text: string, stop = 'end_turn') =>
  Buffer.from(
    JSON.stringify({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'kimi-k2',
      content: [{ type: 'text', text }],
      stop_reason: stop,
      stop_sequence: null,
      usage: { input_tokens: 5, output_tokens: 9 },
    }),
  );

/** A Responses stream with one message item streamed in `deltas`, ending `status` (numbered events, named). */
function responsesStream(deltas: string[], status: 'completed' | 'incomplete' = 'completed'): string {
  let seq = 0;
  const ev = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: seq++, ...data })}\n\n`;
  const text = deltas.join('');
  const part = { type: 'output_text', text, annotations: [] };
  const item = {
    id: 'msg_1',
    type: 'message',
    status: status === 'completed' ? 'completed' : 'incomplete',
    role: 'assistant',
    content: [part],
  };
  const res = (s: string, output: object[]) => ({
    id: 'resp_1',
    object: 'response',
    status: s,
    model: 'moonshotai/kimi-k2',
    output,
    incomplete_details: s === 'incomplete' ? { reason: 'max_output_tokens' } : null,
  });
  return (
    ev('response.created', { response: res('in_progress', []) }) +
    ev('response.output_item.added', { output_index: 0, item: { ...item, status: 'in_progress', content: [] } }) +
    ev('response.content_part.added', { item_id: 'msg_1', output_index: 0, content_index: 0, part: { ...part, text: '' } }) +
    deltas
      .map((delta) => ev('response.output_text.delta', { item_id: 'msg_1', output_index: 0, content_index: 0, delta, logprobs: [] }))
      .join('') +
    ev('response.output_text.done', { item_id: 'msg_1', output_index: 0, content_index: 0, text, logprobs: [] }) +
    ev('response.content_part.done', { item_id: 'msg_1', output_index: 0, content_index: 0, part }) +
    ev('response.output_item.done', { output_index: 0, item }) +
    ev(`response.${status}`, { response: res(status, [item]) })
  );
}

const responsesBody = (text: string, status = 'completed') =>
  Buffer.from(
    JSON.stringify({
      id: 'resp_1',
      object: 'response',
      status,
      model: 'moonshotai/kimi-k2',
      output: [{ id: 'msg_1', type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text, annotations: [] }] }],
      incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    }),
  );

function through<T extends { push(b: Buffer): Buffer; end(): Buffer; record(): RepairRecord | undefined }>(
  repair: T,
  text: string,
  n = 7,
): { out: string; record: RepairRecord } {
  const out = Buffer.concat([...pieces(text, n).map((p) => repair.push(Buffer.from(p))), repair.end()]).toString('utf8');
  return { out, record: repair.record()! };
}

/** The data objects of an SSE text. */
const events = (sse: string): any[] =>
  sse
    .split('\n\n')
    .filter((b) => b.includes('data: '))
    .map((b) =>
      JSON.parse(
        b
          .split('\n')
          .filter((l) => l.startsWith('data: '))
          .map((l) => l.slice(6))
          .join('\n'),
      ),
    );

describe('the repair record names its protocol, and the summary speaks it', () => {
  test('Chat Completions: tool_calls, finish_reason', () => {
    const { record } = through(new SseRepair(kimi()), chatStream([{ content: LEAK }]));
    assert.equal(record.protocol, 'openai-chat');
    assert.match(
      repairSummary(record),
      /^1 call delivered as tool_calls, \d+ chars of markup removed from content, finish_reason stop → tool_calls$/,
    );
    const whole = repairJsonBody(
      Buffer.from(
        JSON.stringify({
          id: 'x',
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: LEAK }, finish_reason: 'stop' }],
        }),
      ),
      kimi(),
    ).record!;
    assert.equal(whole.protocol, 'openai-chat');
  });

  test('Anthropic Messages: tool_use blocks, stop_reason; a failed turn reads as an error event', () => {
    const { record } = through(new AnthropicSseRepair(kimi()), anthropicStream(pieces(LEAK, 5)));
    assert.equal(record.protocol, 'anthropic-messages');
    const line = repairSummary(record);
    assert.match(line, /^1 call delivered as tool_use blocks, \d+ chars of markup removed from text, stop_reason end_turn → tool_use$/);
    assert.doesNotMatch(line, /tool_calls|finish_reason/);
    const cut = repairAnthropicBody(anthropicBody(CUT), kimi()).record!;
    assert.equal(cut.protocol, 'anthropic-messages');
    assert.match(repairSummary(cut), /^1 truncated call withheld, .*stop_reason end_turn → an error event \(turn failed\)$/);
  });

  test('OpenAI Responses: function_call items, status (only when it changes)', () => {
    const { record } = through(new ResponsesSseRepair(kimi()), responsesStream(pieces(LEAK, 5)));
    assert.equal(record.protocol, 'openai-responses');
    const line = repairSummary(record);
    assert.match(line, /^1 call delivered as function_call items, \d+ chars of markup removed from output_text$/);
    assert.doesNotMatch(line, /tool_calls|finish_reason/);
    const cut = repairResponsesBody(responsesBody(CUT), kimi()).record!;
    assert.equal(cut.protocol, 'openai-responses');
    assert.match(repairSummary(cut), /^1 truncated call withheld, .*status completed → failed$/);
  });

  test('a record kept before the protocol was recorded reads as Chat Completions', () => {
    const old: RepairRecord = {
      truncated: 'withhold',
      calls: [
        { index: 0, id: 'functions.read:0', name: 'read', from: 'content', family: 'kimi-k2', status: 'delivered', argumentsChars: 2 },
      ],
      removedChars: { content: 9, reasoning: 0 },
      finishReason: { upstream: 'stop', delivered: 'tool_calls' },
    };
    assert.equal(
      repairSummary(old),
      '1 call delivered as tool_calls, 9 chars of markup removed from content, finish_reason stop → tool_calls',
    );
  });

  test('a preview over samples speaks the protocol of the path', () => {
    const req = JSON.stringify({ model: 'moonshotai/kimi-k2', max_tokens: 100, messages: [{ role: 'user', content: 'write' }] });
    const p = repairPreview({ requestBody: req, path: '/v1/messages', contentType: 'application/json', bytes: anthropicBody(LEAK) });
    assert.equal(previewsLine([p]), '1 of 1 sample: 1 call delivered as tool_use blocks (write ×1)');
  });
});

describe('Anthropic tool_use ids are ones Anthropic takes back', () => {
  test('Kimi numbering, spelled functions_NAME_IDX: streamed, whole, recorded and previewed alike', () => {
    // The model numbers its call 3 (three calls in the history before it).
    const { out, record } = through(
      new AnthropicSseRepair(kimi(3)),
      anthropicStream(pieces(LEAK.replace('functions.write:0', 'functions.write:3'), 4)),
    );
    const start = events(out).find((e) => e.content_block?.type === 'tool_use');
    assert.equal(start.content_block.id, 'functions_write_3', 'the conversation-wide counter is kept');
    assert.match(start.content_block.id, ANTHROPIC_ID);
    assert.equal(record.calls[0].id, 'functions_write_3', 'the record names the id the agent got');
    // An id without the functions. prefix is numbered by the history's calls, as for Chat.
    const own = through(new AnthropicSseRepair(kimi(3)), anthropicStream([LEAK.replace('functions.write:0', 'write:7')]));
    assert.equal(events(own.out).find((e) => e.content_block?.type === 'tool_use').content_block.id, 'functions_write_3');
    const whole = JSON.parse(repairAnthropicBody(anthropicBody(LEAK), kimi()).bytes.toString());
    assert.deepEqual(whole.content[1], { type: 'tool_use', id: 'functions_write_0', name: 'write', input: JSON.parse(ARGS) });
    const req = JSON.stringify({ model: 'moonshotai/kimi-k2', max_tokens: 100, messages: [{ role: 'user', content: 'write' }] });
    const p = repairPreview({
      requestBody: req,
      path: '/v1/messages',
      contentType: 'text/event-stream',
      bytes: Buffer.from(anthropicStream([LEAK])),
    })!;
    assert.deepEqual(
      p.calls.map((c) => c.id),
      ['functions_write_0'],
    );
  });

  test('Chat Completions and Responses keep Kimi ids as the model writes them', () => {
    const chat = JSON.parse(
      repairJsonBody(
        Buffer.from(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: LEAK }, finish_reason: 'stop' }],
          }),
        ),
        kimi(),
      ).bytes.toString(),
    );
    assert.equal(chat.choices[0].message.tool_calls[0].id, 'functions.write:0');
    const responses = JSON.parse(repairResponsesBody(responsesBody(LEAK), kimi()).bytes.toString());
    assert.equal(responses.output[1].call_id, 'functions.write:0');
  });

  test('any other character outside [a-zA-Z0-9_-] becomes _, the id stays the same for the same call', () => {
    assert.equal(anthropicId('functions.write:12'), 'functions_write_12');
    assert.equal(anthropicId('functions.mcp__fs__read:0'), 'functions_mcp__fs__read_0');
    assert.equal(anthropicId('call_0a9f'), 'call_0a9f');
    assert.equal(anthropicId('a b/c@d'), 'a_b_c_d');
    for (const id of ['functions.write:0', 'x.y:z', 'é']) assert.match(anthropicId(id), ANTHROPIC_ID, id);
  });

  test('the next turn: the Kimi id rule reads the repaired ids in Anthropic history as Kimi numbering; a Chat history with them is still flagged', () => {
    const { out } = through(new AnthropicSseRepair(kimi()), anthropicStream([LEAK]));
    const tool = events(out).find((e) => e.content_block?.type === 'tool_use').content_block;
    const next = {
      model: 'moonshotai/kimi-k2-0905',
      max_tokens: 100,
      tools: [{ name: 'write', input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } } } }],
      messages: [
        { role: 'user', content: 'write a.md' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: "I'll write it." },
            { type: 'tool_use', id: tool.id, name: tool.name, input: JSON.parse(ARGS) },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: tool.id, content: 'written' }] },
      ],
    };
    const request = normalizeRequest(JSON.stringify(next), { path: '/v1/messages' });
    assert.equal(request.protocol, 'anthropic-messages');
    assert.deepEqual(
      request.messages.flatMap((m) => m.toolCalls ?? []).map((c) => c.id),
      ['functions_write_0'],
    );
    const ok = response({ message: { content: 'Done.' }, finishReason: 'stop' });
    assert.deepEqual(run(historyKimiIds, { response: ok, request }).findings, []);
    // The same spelling naming another tool, or in a Chat Completions history, is still not Kimi's numbering.
    const other = {
      ...request,
      messages: request.messages.map((m) => ({ ...m, toolCalls: m.toolCalls?.map((c) => ({ ...c, id: 'functions_read_0' })) })),
    };
    assert.equal(run(historyKimiIds, { response: ok, request: other }).findings.length, 1);
    assert.equal(run(historyKimiIds, { response: ok, request: { ...request, protocol: 'openai-chat' } }).findings.length, 1);
  });
});

describe('Responses: an incomplete turn whose leaked call is whole ends as Chat ends finish_reason length', () => {
  test('streamed: response.incomplete (max_output_tokens) becomes response.completed, the call delivered', () => {
    const { out, record } = through(new ResponsesSseRepair(kimi()), responsesStream(pieces(LEAK, 6), 'incomplete'));
    const evs = events(out);
    const last = evs.at(-1);
    assert.equal(last.type, 'response.completed');
    assert.match(out, /event: response\.completed\n/);
    assert.doesNotMatch(out, /response\.incomplete/);
    assert.equal(last.response.status, 'completed');
    assert.equal(last.response.incomplete_details, null);
    assert.deepEqual(
      last.response.output.map((i: any) => i.type),
      ['message', 'function_call'],
    );
    assert.deepEqual(record.finishReason, { upstream: 'incomplete', delivered: 'completed' });
    assert.match(repairSummary(record), /status incomplete → completed$/);
    for (let i = 1; i < evs.length; i++) assert.equal(evs[i].sequence_number, evs[i - 1].sequence_number + 1);
    const parsed = parseResponseBody(Buffer.from(out), { path: '/v1/responses', contentType: 'text/event-stream' });
    assert.equal(parsed.finishReason, 'tool_calls');
    assert.deepEqual(
      parsed.message.toolCalls.map((c) => c.name),
      ['write'],
    );
  });

  test('whole body: status incomplete becomes completed; a truncated call keeps incomplete', () => {
    const { bytes, record } = repairResponsesBody(responsesBody(LEAK, 'incomplete'), kimi());
    const o = JSON.parse(bytes.toString());
    assert.equal(o.status, 'completed');
    assert.equal(o.incomplete_details, null);
    assert.deepEqual(record!.finishReason, { upstream: 'incomplete', delivered: 'completed' });
    const cut = repairResponsesBody(responsesBody(CUT, 'incomplete'), kimi());
    assert.equal(JSON.parse(cut.bytes.toString()).status, 'incomplete');
    assert.equal(cut.record!.finishReason, undefined);
  });

  test('the same rule as Chat: finish_reason length with a whole call becomes tool_calls', () => {
    const { out } = through(new SseRepair(kimi()), chatStream([{ content: LEAK }], 'length'));
    assert.match(out, /"finish_reason":"tool_calls"/);
  });
});
