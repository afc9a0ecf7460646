// Tool calls in a dialect Tokenscope has no grammar for (checks/unknown-dialect-call.ts): reported where they sit,
// for an unknown model and for a known family whose parser does not read them; realistic answers that hold tags,
// JSON, code and ReAct-like words are not.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import check from '../../../src/core/checks/unknown-dialect-call';
import { formatText } from '../../../src/cli/lint-text';
import { normalizeRequest, parseResponseBody } from '../../../src/core/wire/index';
import type { NormalizedRequest, ToolDef } from '../../../src/core/model';
import { RECORDINGS, recording } from '../../helpers/shared';
import { response, run, slice } from './helpers';

const UNKNOWN = 'some/unknown-model';
const WEATHER: ToolDef = {
  name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const READ: ToolDef = { name: 'read_file', parameters: { type: 'object', properties: { path: { type: 'string' } } } };
const withTools = (tools: ToolDef[], model = UNKNOWN): NormalizedRequest => ({
  protocol: 'openai-chat',
  model,
  tools,
  messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  raw: {},
});

/** Calls in dialects no family reads: the text, and the part of it the finding must cover. */
const CALLS: { what: string; text: string; covers: string; shape: RegExp }[] = [
  {
    what: 'a call tag around NAME{json}',
    text: '<call>get_weather{"city":"Paris"}</call>',
    covers: '<call>get_weather{"city":"Paris"}</call>',
    shape: /<call> tag around get_weather\{…\}/,
  },
  {
    what: 'a tag around tool_name / tool_input JSON',
    text: 'Checking now.\n<tool>{"tool_name": "get_weather", "tool_input": {"city": "Paris"}}</tool>',
    covers: '<tool>{"tool_name": "get_weather", "tool_input": {"city": "Paris"}}</tool>',
    shape: /<tool> tag around a JSON call/,
  },
  {
    what: 'bracket tokens around a JSON call',
    text: 'Let me look that up. [TOOL]{"name": "get_weather", "arguments": {"city": "Paris"}}[/TOOL]',
    covers: '[TOOL]{"name": "get_weather", "arguments": {"city": "Paris"}}[/TOOL]',
    shape: /\[TOOL\] … \[\/TOOL\] around a JSON call/,
  },
  {
    what: 'ReAct lines',
    text: 'Thought: I need the current weather.\nAction: get_weather\nAction Input: {"city": "Paris"}',
    covers: 'Action: get_weather\nAction Input: {"city": "Paris"}',
    shape: /ReAct/,
  },
  {
    what: 'a fenced JSON call the turn ends on',
    text: 'I will check the weather.\n\n```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```\n',
    covers: '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
    shape: /```json block holding a JSON call/,
  },
  {
    what: 'a tool_code fence with a python-style call',
    text: '```tool_code\nget_weather(city="Paris")\n```',
    covers: '```tool_code\nget_weather(city="Paris")\n```',
    shape: /```tool_code block holding get_weather\(…\)/,
  },
  {
    what: 'a call-like element with a name attribute and parameters',
    text: '<tool_use name="get_weather"><arg name="city">Paris</arg></tool_use>',
    covers: '<tool_use name="get_weather"><arg name="city">Paris</arg></tool_use>',
    shape: /<tool_use name="get_weather"> element with its parameters/,
  },
  {
    what: 'an OpenAI-shaped call list after a call-list word',
    text: 'tool_calls: [{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]',
    covers: 'tool_calls: [{"type": "function", "function": {"name": "get_weather", "arguments": "{\\"city\\": \\"Paris\\"}"}}]',
    shape: /tool_calls\[…\] holding JSON calls/,
  },
  {
    what: 'a call-like wrapper around a tagged JSON call',
    text: '<calls>\n<call>{"name": "get_weather", "parameters": {"city": "Paris"}}</call>\n</calls>',
    covers: '<calls>\n<call>{"name": "get_weather", "parameters": {"city": "Paris"}}</call>\n</calls>',
    shape: /<calls> around a <call> tag around a JSON call/,
  },
  {
    what: 'a JSON call cut off inside its arguments',
    text: 'On it. <toolcall>{"name": "get_weather", "arguments": {"city": "Par',
    covers: '<toolcall>{"name": "get_weather", "arguments": {"city": "Par',
    shape: /<toolcall> tag before a JSON call, never closed/,
  },
];

function findings(input: Parameters<typeof analyze>[0]) {
  return analyze(input).findings.filter((f) => f.rule === check.id);
}

describe('unknown-dialect-call', () => {
  for (const c of CALLS) {
    test(`${c.what}: a warning at the call, for an unknown model`, () => {
      const r = run(check, { nativeText: c.text, model: UNKNOWN });
      assert.equal(r.findings.length, 1, JSON.stringify(r.findings));
      const f = r.findings[0];
      assert.equal(f.severity, 'warning');
      assert.equal(f.location, 'content');
      assert.equal(slice(r, f), c.covers);
      assert.match(f.message, /^This looks like a tool call in a dialect Tokenscope has no grammar for \(/);
      assert.match(f.message, c.shape);
      assert.match(f.message, /calling get_weather/);
      assert.match(f.message, /a parser for this model would not deliver it as a call/);
      // And it reaches the user: the analysis keeps it.
      assert.equal(findings({ nativeText: c.text, model: UNKNOWN }).length, 1);
    });
  }

  test('the same calls from a known family whose parser does not read them: reported, naming that family', () => {
    for (const c of CALLS) {
      for (const model of ['Qwen/Qwen3-8B', 'moonshotai/kimi-k2-0905']) {
        const a = analyze({ nativeText: c.text, model, request: withTools([WEATHER], model) });
        assert.ok(a.family, `${model} names a family`);
        const f = a.findings.filter((x) => x.rule === check.id);
        assert.equal(f.length, 1, `${c.what} / ${model}: ${JSON.stringify(a.findings)}`);
        assert.match(f[0].message, /a parser for (Qwen3|Kimi K2)[^;]* would not deliver it as a call/);
        assert.equal(c.text.slice(f[0].start, f[0].end), c.covers);
      }
    }
  });

  test('bracket tokens shaped like special tokens: markup-in-content reports them for an unknown model, this rule for a known family', () => {
    const text = 'Let me look that up. [TOOL_REQUEST]{"name": "get_weather", "arguments": {"city": "Paris"}}[END_TOOL_REQUEST]';
    const known = findings({ nativeText: text, model: 'Qwen/Qwen3-8B' });
    assert.equal(known.length, 1);
    assert.equal(text.slice(known[0].start, known[0].end), text.slice(text.indexOf('[TOOL_REQUEST]')));
    assert.match(known[0].message, /\[TOOL_REQUEST\] … \[END_TOOL_REQUEST\] around a JSON call, calling get_weather\); a parser for Qwen3/);
    assert.deepEqual(
      analyze({ nativeText: text, model: UNKNOWN }).findings.map((f) => f.rule),
      ['markup-in-content'],
    );
  });

  test('in the content and the reasoning of a structured response whose request offered the tool', () => {
    for (const c of CALLS) {
      const inContent = findings({ response: response({ model: UNKNOWN, message: { content: c.text } }), request: withTools([WEATHER]) });
      assert.deepEqual(
        inContent.map((f) => f.location),
        ['content'],
        c.what,
      );
      const inReasoning = findings({
        response: response({ model: UNKNOWN, message: { reasoning: c.text, content: 'Done.' } }),
        request: withTools([WEATHER]),
      });
      assert.deepEqual(
        inReasoning.map((f) => f.location),
        ['reasoning'],
        c.what,
      );
    }
  });

  test("with the request's tools, only a call to one of them counts; a request with no tools loses no call", () => {
    for (const c of CALLS) {
      assert.deepEqual(findings({ nativeText: c.text, request: withTools([READ]) }), [], `${c.what}: get_weather was not offered`);
      assert.deepEqual(findings({ nativeText: c.text, request: withTools([]) }), [], `${c.what}: no tools offered`);
    }
  });

  test('offered tools make weaker shapes a call: an element named after the tool, a name-only JSON call, a string input', () => {
    const req = withTools([WEATHER, READ]);
    const tagged = '<read_file>\n<path>src/app.ts</path>\n</read_file>';
    const a = findings({ nativeText: `Opening it.\n${tagged}`, request: req });
    assert.equal(a.length, 1);
    assert.match(a[0].message, /<read_file> element named after the tool, calling read_file/);
    assert.equal(findings({ nativeText: '[TOOL]{"name": "get_weather"}[/TOOL]', request: req }).length, 1);
    assert.equal(findings({ nativeText: '<action>{"action": "get_weather", "action_input": "Paris"}</action>', request: req }).length, 1);
    // Without the request, the same shapes are too weak a sign.
    assert.deepEqual(findings({ nativeText: `Opening it.\n${tagged}`, model: UNKNOWN }), []);
    assert.deepEqual(findings({ nativeText: '[TOOL]{"name": "get_weather"}[/TOOL]', model: UNKNOWN }), []);
    assert.deepEqual(findings({ nativeText: '<action>{"action": "get_weather", "action_input": "Paris"}</action>', model: UNKNOWN }), []);
  });

  test("Gemma's tool_code: print(default_api.NAME(…)) is the call to NAME", () => {
    const text = '```tool_code\nprint(default_api.get_weather(city="Paris"))\n```';
    const f = findings({ nativeText: text, request: withTools([WEATHER]) });
    assert.equal(f.length, 1);
    assert.match(f[0].message, /```tool_code block holding get_weather\(…\), calling get_weather\)/);
    assert.deepEqual(findings({ nativeText: text, request: withTools([READ]) }), []);
  });

  test('a whole content that is one JSON call, from a family whose calls need markers (its tags left out)', () => {
    const text = '{"name": "get_weather", "arguments": {"city": "Paris"}}';
    const qwen = findings({ nativeText: text, model: 'Qwen/Qwen3-8B', request: withTools([WEATHER], 'Qwen/Qwen3-8B') });
    assert.equal(qwen.length, 1);
    assert.match(
      qwen[0].message,
      /the whole content is a JSON call, with none of the dialect's markers, calling get_weather\); a parser for Qwen3/,
    );
    assert.equal(text.slice(qwen[0].start, qwen[0].end), text);
    // Llama 3 writes its calls bare: its parser takes it, and there is nothing to report.
    const llama = analyze({ nativeText: text, model: 'meta-llama/Llama-3.1-8B-Instruct' });
    assert.equal(llama.message.toolCalls.length, 1);
    assert.ok(!llama.findings.some((x) => x.rule === check.id));
    // The same JSON inside a sentence is no call.
    assert.deepEqual(findings({ nativeText: `${text} is the JSON you would send.`, model: 'Qwen/Qwen3-8B' }), []);
  });

  test('a call the turn also delivered as a structured call is no loss', () => {
    const echoed = response({
      model: UNKNOWN,
      message: {
        content: '```json\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n```',
        toolCalls: [{ index: 0, id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
    });
    assert.deepEqual(findings({ response: echoed, request: withTools([WEATHER]) }), []);
    // A different call in the text is still lost.
    const other = response({
      model: UNKNOWN,
      message: {
        content: '```json\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n```',
        toolCalls: [{ index: 0, id: 'c1', name: 'get_weather', arguments: '{"city":"Paris"}' }],
      },
    });
    assert.equal(findings({ response: other, request: withTools([WEATHER]) }).length, 1);
  });

  test('markup another rule already reports is left to it (no second finding on the same text)', () => {
    // Special-token-shaped markup of an unknown model: markup-in-content reports it as an error.
    const special = analyze({
      nativeText: '[TOOL_REQUEST]{"name": "get_weather", "arguments": {"city": "Paris"}}[END_TOOL_REQUEST]',
      model: UNKNOWN,
    });
    assert.deepEqual(
      special.findings.map((f) => f.rule),
      ['markup-in-content'],
    );
    // A known family's markers in another family's response: the leak rule reports it.
    const leak = analyze({
      nativeText: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      model: 'moonshotai/kimi-k2-0905',
    });
    assert.ok(leak.findings.some((f) => f.rule === 'markup-in-content'));
    assert.ok(!leak.findings.some((f) => f.rule === check.id), JSON.stringify(leak.findings));
    // A call the family's own parser reads is a call, not text.
    const parsed = analyze({
      nativeText: '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>',
      model: 'Qwen/Qwen3-8B',
    });
    assert.equal(parsed.message.toolCalls.length, 1);
    assert.ok(!parsed.findings.some((f) => f.rule === check.id));
  });

  test('the text report counts it: the summary line never says "no findings" over it', () => {
    for (const c of CALLS) {
      const a = analyze({ nativeText: c.text, model: UNKNOWN });
      const only = { ...a, findings: a.findings.filter((f) => f.rule === check.id) };
      const head = formatText('out.txt', only).split('\n')[0];
      assert.equal(head, 'out.txt: family unknown, 1 warning', c.what);
      assert.doesNotMatch(formatText('out.txt', a).split('\n')[0], /no findings/, c.what);
    }
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Realistic answers that must stay clean, with and without the request's tools.

const HTML_REPLY = `I've updated the header so the menu button is keyboard-accessible. The new markup:

\`\`\`html
<header class="site-header">
  <nav aria-label="Main">
    <a href="/">Home</a>
    <button type="button" name="menu" onclick="toggleMenu()">Menu</button>
    <form name="search" action="/search"><input name="q" /></form>
  </nav>
</header>
\`\`\`

I replaced the old \`<div id="nav">\` wrapper with a semantic <nav> element, and the <button> now has an explicit
type so it no longer submits the <form>. Run \`npm test\` to check the snapshot.`;

const JSON_CONFIG = `Add a launch configuration to \`.vscode/launch.json\`:

\`\`\`json
{
  "version": "0.2.0",
  "configurations": [
    {
      "name": "Launch app",
      "type": "node",
      "request": "launch",
      "program": "\${workspaceFolder}/src/index.js",
      "args": ["--port", "3000"]
    }
  ]
}
\`\`\`

and in \`package.json\`:

\`\`\`json
{ "name": "weather-app", "version": "1.2.0", "scripts": { "start": "node src/index.js" } }
\`\`\``;

const PYTHON_DEF = `Here is a small client for the weather API:

\`\`\`python
import requests

def get_weather(city: str) -> dict:
    """Return the current weather for a city."""
    resp = requests.get("https://api.example.com/weather", params={"city": city}, timeout=10)
    resp.raise_for_status()
    return resp.json()

if __name__ == "__main__":
    print(get_weather(city="Paris"))
\`\`\`

Call \`get_weather("Paris")\` from your code; it raises on HTTP errors.`;

const TOOL_DEFINITION = `To let the model call it, declare the tool in the request:

\`\`\`json
{"type": "function", "function": {"name": "get_weather", "description": "Current weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
\`\`\`

The model then answers with a tool call instead of text.`;

const EXPLAINED_CALL = `The model answers with a JSON object like \`{"name": "get_weather", "arguments": {"city": "Paris"}}\`, which your code
parses, runs, and sends back as a \`tool\` message.

\`\`\`json
{"name": "get_weather", "arguments": {"city": "Paris"}}
\`\`\`

After that, the model writes its final answer from the tool result.`;

const JSON_DATA = `Here are the users as JSON:

\`\`\`json
[{"name": "Alice", "age": 31, "city": "Paris"}, {"name": "Bob", "age": 27, "city": "Rome"}]
\`\`\``;

const XML_ANSWER = `Claude's old prompt format wrapped calls like this:

\`\`\`xml
<function_calls>
<invoke name="get_weather">
<parameter name="city">Paris</parameter>
</invoke>
</function_calls>
\`\`\`

Newer APIs return structured tool_use blocks instead.`;

const SPRING_XML = `In Struts 2 the mapping lives in struts.xml: <action name="login" class="app.LoginAction"><result name="success">/home.jsp</result></action>
maps /login to the action class.`;

const REACT_EXPLAINED = `A ReAct agent alternates thought and action:

\`\`\`text
Thought: I need the weather.
Action: get_weather
Action Input: {"city": "Paris"}
Observation: 21 °C, clear
\`\`\`

The framework parses the Action lines itself.`;

const PROSE = `To call a tool, the model writes <tool_call> followed by JSON and closes it with </tool_call>; in Mistral's
format it is [TOOL_CALLS] and a list. The [TODO] items in README.md and the checkbox [x] done stay as they are. Action items: none.`;

const JS_SNIPPET = `Use the hook like this: <Button onClick={() => setOpen(true)}>Open</Button> renders the trigger, and
\`calls[0]\` is the first recorded call in the mock (\`expect(fn.mock.calls[0]).toEqual(["Paris"])\`).`;

const HTML_CODE = `The endpoint takes the call as <code>{"name": "get_weather", "arguments": {"city": "Paris"}}</code> and answers with
<pre>{"name": "get_weather", "arguments": {"city": "Paris"}}</pre>`;

const REASONING = 'The user wants the weather in Paris. I should call get_weather with {"city": "Paris"} and then summarise the result.';

const HEALTHY = {
  HTML_REPLY,
  JSON_CONFIG,
  PYTHON_DEF,
  TOOL_DEFINITION,
  EXPLAINED_CALL,
  JSON_DATA,
  XML_ANSWER,
  SPRING_XML,
  REACT_EXPLAINED,
  PROSE,
  JS_SNIPPET,
  HTML_CODE,
};

describe('unknown-dialect-call: realistic answers stay clean', () => {
  for (const [name, text] of Object.entries(HEALTHY)) {
    test(name, () => {
      for (const input of [
        { nativeText: text, model: UNKNOWN },
        { nativeText: text, model: 'Qwen/Qwen3-8B' },
        { response: response({ model: UNKNOWN, message: { content: text } }) },
        { response: response({ model: UNKNOWN, message: { reasoning: REASONING, content: text } }), request: withTools([WEATHER, READ]) },
      ]) {
        assert.deepEqual(run(check, input).findings, [], `${name}: ${JSON.stringify(Object.keys(input))}`);
      }
    });
  }

  test('an explained call followed by more explanation is an example, not a call (without the request)', () => {
    // The fenced call of EXPLAINED_CALL is followed by prose; the same fence ending the turn is a call.
    const ending = EXPLAINED_CALL.slice(0, EXPLAINED_CALL.indexOf('After that'));
    assert.equal(run(check, { nativeText: ending, model: UNKNOWN }).findings.length, 1);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// The healthy recordings (shared/recordings, read at test time): nothing from this rule, as recorded and with the
// model id removed (family unknown).

describe('unknown-dialect-call: healthy recordings', () => {
  for (const name of RECORDINGS) {
    test(`${name}: no finding`, (t) => {
      const r = recording(name);
      if (!r) return t.skip('shared/recordings is not available (set TOKENSCOPE_SHARED)');
      const body = r.files['response.json'] ?? r.files['stream.sse'];
      assert.ok(body, 'recording has a response');
      const request = r.files['request.json'] ? normalizeRequest(JSON.parse(r.files['request.json'])) : undefined;
      const parsed = parseResponseBody(body);
      assert.ok(
        (parsed.message.content ?? '') + (parsed.message.reasoning ?? '') + parsed.message.toolCalls.length,
        'the recording has a turn to judge',
      );
      const asRecorded = analyze({ response: parsed, request });
      assert.deepEqual(
        asRecorded.findings.filter((f) => f.rule === check.id),
        [],
      );
      const anonymous = analyze({ response: { ...parsed, model: undefined }, request: request && { ...request, model: undefined } });
      assert.equal(anonymous.family === undefined || anonymous.familySource === 'markers', true);
      assert.deepEqual(
        anonymous.findings.filter((f) => f.rule === check.id),
        [],
      );
      // The turn's own text linted raw, as `lint FILE` on a pasted answer.
      const text = [parsed.message.reasoning, parsed.message.content].filter(Boolean).join('\n\n');
      if (text) assert.deepEqual(findings({ nativeText: text, model: UNKNOWN, request }), []);
    });
  }
});
