// LFM2 / LFM2.5 (Liquid AI): the pythonic call list between <|tool_call_start|> and <|tool_call_end|>, and its JSON form.
// Fixtures from the engines' tests, source beside each:
// - SGLang: sgl-project/sglang test/registered/unit/function_call/test_lfm2_detector.py @ 38de5808e13ce232ccd88f1bc2f418e3d879e015
// - Ollama: ollama/ollama model/parsers/lfm2_test.go @ 24e37f51bd05efde54057cbb63809a3dafaf5082
// - vLLM: vllm-project/vllm tests/tool_parsers/test_lfm2_tool_parser.py @ 011cde7c177a29bbcb0052d80e5ab7671a70f634
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import { detectFamily, getFamily, getFormat } from '../../../src/core/families/index';
import { assertProblems, assertSegments, codes } from './helpers';

const f = getFormat('lfm2');
const BOT = '<|tool_call_start|>';
const EOT = '<|tool_call_end|>';

function parse(text: string) {
  const p = f.parse(text);
  assertSegments(p.text, p.segments);
  assertProblems(p);
  return p;
}

/** The calls as name and decoded arguments. */
function calls(text: string) {
  return parse(text).message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]);
}

test('lfm2: healthy outputs from SGLang test_lfm2_detector.py parse to the reference calls with no problem', () => {
  const cases: [string, unknown[][]][] = [
    // test_single_call_pythonic
    [`${BOT}[get_weather(city="Tokyo")]${EOT}`, [['get_weather', { city: 'Tokyo' }]]],
    // test_single_call_json: json.dumps([{"name": …, "arguments": …}])
    [`${BOT}[{"name": "search", "arguments": {"query": "sglang"}}]${EOT}`, [['search', { query: 'sglang' }]]],
    // test_multiple_calls_pythonic
    [
      `${BOT}[get_weather(city="Tokyo"), search(query="restaurants")]${EOT}`,
      [
        ['get_weather', { city: 'Tokyo' }],
        ['search', { query: 'restaurants' }],
      ],
    ],
    // test_multiple_args_pythonic
    [`${BOT}[get_weather(city="London", unit="celsius")]${EOT}`, [['get_weather', { city: 'London', unit: 'celsius' }]]],
  ];
  for (const [text, want] of cases) {
    assert.deepEqual(parse(text).problems, [], text);
    assert.deepEqual(calls(text), want, text);
  }
  // test_normal_text_before_call
  const p = parse(`Sure! ${BOT}[get_weather(city="Paris")]${EOT}`);
  assert.equal(p.message.content, 'Sure!');
  assert.deepEqual(
    p.message.toolCalls.map((c) => c.name),
    ['get_weather'],
  );
});

test('lfm2: healthy outputs from Ollama lfm2_test.go (thinking, several blocks, single quotes, JSON literals, no arguments)', () => {
  // thinking_with_tool_call
  let p = parse(`<think>Let me check the weather...</think>I'll get that for you.${BOT}[get_weather(location="Paris")]${EOT}`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.reasoning, 'Let me check the weather...');
  assert.equal(p.message.content, "I'll get that for you.");
  assert.deepEqual(calls(p.text), [['get_weather', { location: 'Paris' }]]);
  // multiple_tool_calls: two blocks back to back
  p = parse(`Getting weather for both cities.${BOT}[get_weather(location="Paris")]${EOT}${BOT}[get_weather(location="London")]${EOT}`);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(calls(p.text), [
    ['get_weather', { location: 'Paris' }],
    ['get_weather', { location: 'London' }],
  ]);
  // content_between_tools, content_after_tool
  p = parse(`${BOT}[get_weather(location="Paris")]${EOT}Checking again.${BOT}[get_weather(location="Paris")]${EOT}Done.`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Checking again.\n\nDone.');
  assert.equal(p.message.toolCalls.length, 2);
  // complex_tool_arguments: single quotes, Python dict and list literals
  assert.deepEqual(
    calls(`Processing data.${BOT}[process_data(items=['item1','item2'], config={'enabled': True, 'threshold': 0.95})]${EOT}`),
    [['process_data', { items: ['item1', 'item2'], config: { enabled: true, threshold: 0.95 } }]],
  );
  // python_style_mixed_types: LFM2 writes JSON's true as well as Python's True
  assert.deepEqual(calls(`Processing.${BOT}[process(name="test", count=42, enabled=true)]${EOT}`), [
    ['process', { name: 'test', count: 42, enabled: true }],
  ]);
  // python_style_multiple_calls (no space after the comma), empty_tool_call_args
  assert.deepEqual(calls(`Running commands.${BOT}[bash(command='ls'),bash(command='pwd')]${EOT}`), [
    ['bash', { command: 'ls' }],
    ['bash', { command: 'pwd' }],
  ]);
  assert.deepEqual(calls(`Pinging server.${BOT}[ping()]${EOT}`), [['ping', {}]]);
  // ordinary_text, nonmatching_tag: no call, nothing flagged
  for (const t of ['Use <html> or compare 1 < 2.\n', 'Example: <|tool_call_started|>']) {
    const q = parse(t);
    assert.deepEqual(q.message.toolCalls, [], t);
    assert.deepEqual(q.problems, [], t);
  }
});

test('lfm2: healthy outputs from vLLM test_lfm2_tool_parser.py, the slips both engines repair included, parse to the reference calls', () => {
  const cases: [string, unknown[][]][] = [
    // more_types
    [
      `${BOT}[register_user(name='John Doe', age=37, address={'city': 'San Francisco', 'state': 'CA'}, role=None, passed_test=True, aliases=['John', 'Johnny'])]${EOT}`,
      [
        [
          'register_user',
          {
            name: 'John Doe',
            age: 37,
            address: { city: 'San Francisco', state: 'CA' },
            role: null,
            passed_test: true,
            aliases: ['John', 'Johnny'],
          },
        ],
      ],
    ],
    // set_arg: a set literal is a list
    [`${BOT}[label(tags={'urgent', 'bug'})]${EOT}`, [['label', { tags: ['urgent', 'bug'] }]]],
    // leading_zero_int
    [`${BOT}[set_date(month=07, day=05)]${EOT}`, [['set_date', { month: 7, day: 5 }]]],
    // nested_quote: unescaped quotes of the string's own kind inside a shell command
    [
      `${BOT}[bash(command='sed -n '360,450p' /testbed/sympy/matrices/common.py')]${EOT}`,
      [['bash', { command: "sed -n '360,450p' /testbed/sympy/matrices/common.py" }]],
    ],
    // nested_python_c: the only quote after which the call still reads is the last one
    [
      `${BOT}[bash(command='cd /testbed && python3 -c "from sympy import latex\nprint(latex(3*x, mul_symbol='\\,'))"')]${EOT}`,
      [['bash', { command: `cd /testbed && python3 -c "from sympy import latex\nprint(latex(3*x, mul_symbol='\\,'))"` }]],
    ],
    // escaped_string
    [
      `${BOT}[get_weather(city='Martha\\'s Vineyard', metric='\\"cool units\\"')]${EOT}`,
      [['get_weather', { city: "Martha's Vineyard", metric: '"cool units"' }]],
    ],
    // dotted_name
    [
      `${BOT}[grocery.orderIngredients(ingredientList=[{'name': 'Lasagna noodles', 'amount': 250, 'unit': 'g'}], deliveryAddress='845 Willow Lane, Springfield, IL 62704')]${EOT}`,
      [
        [
          'grocery.orderIngredients',
          {
            ingredientList: [{ name: 'Lasagna noodles', amount: 250, unit: 'g' }],
            deliveryAddress: '845 Willow Lane, Springfield, IL 62704',
          },
        ],
      ],
    ],
    // bracket_in_string, multiline_string_arg, nul_byte_string_arg
    [`${BOT}[exec(command='grep -F "]" log.txt')]${EOT}`, [['exec', { command: 'grep -F "]" log.txt' }]]],
    [
      `${BOT}[exec(command='cat > f.py << EOF\nimport csv\nprint(1)\nEOF')]${EOT}`,
      [['exec', { command: 'cat > f.py << EOF\nimport csv\nprint(1)\nEOF' }]],
    ],
    [`${BOT}[exec(command='printf a\u0000b')]${EOT}`, [['exec', { command: 'printf a\u0000b' }]]],
    // test_empty_tool_call_block, test_whitespace_after_start_token
    [`${BOT}[]${EOT}`, []],
    [`${BOT} [get_candidate_status(candidate_id='12345')]${EOT}`, [['get_candidate_status', { candidate_id: '12345' }]]],
    // test_streaming_char_by_char_multi_dict_list
    [
      `${BOT}[grocery.orderIngredients(ingredientList=[{"name": "apple", "quantity": "2"}, {"name": "bread", "quantity": "1"}])]${EOT}`,
      [
        [
          'grocery.orderIngredients',
          {
            ingredientList: [
              { name: 'apple', quantity: '2' },
              { name: 'bread', quantity: '1' },
            ],
          },
        ],
      ],
    ],
  ];
  for (const [text, want] of cases) {
    assert.deepEqual(parse(text).problems, [], text);
    assert.deepEqual(calls(text), want, text);
    // Streamed (test_streaming_char_by_char_multi_dict_list): every prefix is only ever cut off, never malformed.
    for (let i = 1; i < text.length; i++) {
      const q = parse(text.slice(0, i));
      assert.deepEqual(
        codes(q).filter((c) => !['section-unclosed', 'call-unclosed', 'marker-truncated'].includes(c)),
        [],
        text.slice(0, i),
      );
    }
  }
  // content_after_tool_call_nonstreaming, test_streaming_leading_block_and_trailing_in_single_delta
  const p = parse(`Let me check. ${BOT}[get_candidate_status(candidate_id='12345')]${EOT}\nDone.`);
  assert.deepEqual(p.problems, []);
  assert.equal(p.message.content, 'Let me check.\n\nDone.');
});

test('lfm2: nested-quote readings that do not settle on one quote stay broken', () => {
  // Two quotes after which the call reads: neither engine guesses, so neither does Tokenscope.
  assert.deepEqual(codes(parse(`${BOT}[f(a='x 'y', b='z')]${EOT}`)), ['malformed-call']);
  // No quote can close the string.
  assert.deepEqual(codes(parse(`${BOT}[f(a='x'y)]${EOT}`)), ['malformed-call']);
  // A reading that would swallow the next call into the string is not one (SGLang counts the calls by brackets).
  assert.deepEqual(calls(`${BOT}[f(a='x 'y'), g(b='z')]${EOT}`), [
    ['f', { a: "x 'y" }],
    ['g', { b: 'z' }],
  ]);
  // Cut inside such a string: only cut off.
  assert.deepEqual(codes(parse(`${BOT}[bash(command='sed -n '360,4`)).sort(), ['call-unclosed', 'section-unclosed']);
  // test_bad_sibling_call_does_not_drop_good_calls: a bytes argument has no JSON form (the engines skip that call).
  const p = parse(`${BOT}[get_candidate_status(candidate_id='12345'), bad(x=b'z')]${EOT}`);
  assert.deepEqual(codes(p), ['malformed-call']);
  assert.deepEqual(
    p.message.toolCalls.map((c) => c.name),
    ['get_candidate_status', 'bad'],
  );
  assert.deepEqual(JSON.parse(p.message.toolCalls[0].arguments), { candidate_id: '12345' });
  // A number past the float range has no JSON form (vLLM test_olmo3_tool_parser.py test_non_finite_argument_rejected
  // @ 2aac44dc3f7b41fca0273ff024fa557c4c7ab1ee, the same pythonic reading): flagged, never delivered as null.
  const inf = parse(`${BOT}[calc(x=1e999), get_weather(city='SF')]${EOT}`);
  assert.deepEqual(codes(inf), ['malformed-call']);
  assert.deepEqual(JSON.parse(inf.message.toolCalls[1].arguments), { city: 'SF' });
  // test_echoed_tool_call_body_not_leaked_to_content: the body again after the block, capped by a second closer.
  // vLLM hides the echo; it is still the model's markup outside a block, and flagged.
  const body = "[grocery.orderIngredients(ingredientList=[{'name': 'apple', 'quantity': '2'}], deliveryAddress='123 Main St')]";
  const echo = parse(`${BOT}${body}${EOT}${body}${EOT}`);
  assert.equal(echo.message.toolCalls[0].name, 'grocery.orderIngredients');
  assert.ok(echo.problems.length > 0);
});

test('lfm2: broken outputs are flagged and the calls keep what arrived', () => {
  // Cut inside a value: the list, the call and the block are all open.
  let p = parse(`${BOT}[get_weather(location="N`);
  assert.deepEqual(codes(p).sort(), ['call-unclosed', 'section-unclosed']);
  assert.equal(p.message.toolCalls[0].name, 'get_weather');
  // The list whole, <|tool_call_end|> missing (vLLM delivers it, SGLang drops it).
  p = parse(`${BOT}[get_weather(location="NYC")]`);
  assert.deepEqual(codes(p), ['section-unclosed']);
  assert.equal(p.problems[0].marker, EOT);
  assert.deepEqual(calls(p.text), [['get_weather', { location: 'NYC' }]]);
  // <|tool_call_end|> cut short.
  p = parse(`${BOT}[get_weather(location="NYC")]<|tool_call_en`);
  assert.deepEqual(codes(p).sort(), ['marker-truncated', 'section-unclosed']);
  // The end of turn inside the block.
  p = parse(`${BOT}[get_weather(location="NYC")]<|im_end|>`);
  assert.deepEqual(codes(p), ['section-unclosed']);
  // An orphan closer: the list and <|tool_call_end|> without <|tool_call_start|>.
  p = parse(`[get_weather(location="NYC")]${EOT}`);
  assert.deepEqual(codes(p), ['stray-marker']);
  // Not a call list, or calls outside [ ]: vLLM needs the list, so these are malformed.
  assert.deepEqual(codes(parse(`${BOT}hello${EOT}`)), ['malformed-call']);
  assert.deepEqual(codes(parse(`${BOT}get_weather(city="x")${EOT}`)), ['malformed-call']);
  // A JSON-form block cut short.
  p = parse(`${BOT}[{"name": "search", "arguments": {"query": "sgl`);
  assert.ok(codes(p).includes('call-unclosed'), codes(p).join());
});

test('lfm2: model ids pick the family; marker detection picks it on its own sequence, and Kimi K2 keeps its own', () => {
  for (const id of [
    'LiquidAI/LFM2-1.2B-Tool',
    'LiquidAI/LFM2-8B-A1B',
    'LiquidAI/LFM2.5-1.2B-Instruct',
    'openrouter/liquid/lfm2-8b-a1b',
    'liquid/lfm-2.5-1.2b-thinking:free',
    'liquid/lfm-2.2-6b',
    'unsloth/LFM2-1.2B-GGUF',
  ]) {
    assert.equal(detectFamily(id)?.format.id, 'lfm2', id);
  }
  for (const id of ['liquid/lfm-7b', 'liquid/lfm-40b', 'moonshotai/kimi-k2-0905']) assert.notEqual(detectFamily(id)?.format.id, 'lfm2', id);
  const healthy = `I'll check.${BOT}[get_weather(location="Paris")]${EOT}<|im_end|>`;
  assert.equal(detectFamily(undefined, healthy)?.format.id, 'lfm2');
  assert.equal(detectFamily(undefined, `${BOT}[{"name": "search", "arguments": {}}]${EOT}`)?.format.id, 'lfm2');
  // The orphan closer is still LFM2's, not Kimi K2's or Llama 4's.
  assert.equal(detectFamily(undefined, `[get_weather(location="NYC")]${EOT}`)?.format.id, 'lfm2');
  const kimi =
    '<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"a":1}<|tool_call_end|><|tool_calls_section_end|>';
  assert.equal(detectFamily(undefined, kimi)?.format.id, 'kimi-k2');
  assert.equal(getFamily('lfm2').tokenizer.repo, 'LiquidAI/LFM2-1.2B');
});

test('lfm2: analyze — the model id picks LFM2, a broken output is an error, a healthy one and prose are clean', () => {
  const model = 'LiquidAI/LFM2-1.2B-Tool';
  const healthy = analyze({ nativeText: `Sure! ${BOT}[get_weather(city="Paris", unit="celsius")]${EOT}<|im_end|>`, model });
  assert.equal(healthy.family, 'lfm2');
  assert.equal(healthy.familySource, 'model-id');
  assert.deepEqual(
    healthy.findings.filter((x) => x.severity === 'error'),
    [],
  );
  assert.deepEqual(
    healthy.message.toolCalls.map((c) => [c.name, JSON.parse(c.arguments)]),
    [['get_weather', { city: 'Paris', unit: 'celsius' }]],
  );
  for (const broken of [`${BOT}[get_weather(city="Par`, `${BOT}[get_weather(city="Paris")]`]) {
    const a = analyze({ nativeText: broken, model });
    assert.ok(
      a.findings.some((x) => x.severity === 'error'),
      `${broken}: ${a.findings.map((x) => x.rule).join()}`,
    );
  }
  // Without a model id the markers tell the family, and the broken output is still an error.
  const unlabelled = analyze({ nativeText: `${BOT}[get_weather(city="Par` });
  assert.equal(unlabelled.family, 'lfm2');
  assert.ok(unlabelled.findings.some((x) => x.severity === 'error'));
  const prose = analyze({ nativeText: 'The list [a, b] has two items; call f(x=1) later.', model });
  assert.deepEqual(
    prose.findings.filter((x) => x.severity !== 'info'),
    [],
  );
});

test('lfm2: render writes the pythonic list, and parse gives the message back', () => {
  const m = {
    reasoning: 'Two lookups.',
    content: 'Checking.',
    toolCalls: [
      { index: 0, name: 'get_weather', arguments: '{"city":"Paris","days":3,"metric":true,"note":null}' },
      { index: 1, name: 'ping', arguments: '{}' },
    ],
  };
  const r = f.render(m);
  assert.equal(
    r.text,
    `<think>Two lookups.</think>Checking.${BOT}[get_weather(city="Paris", days=3, metric=True, note=None), ping()]${EOT}<|im_end|>`,
  );
  const p = parse(r.text);
  assert.deepEqual(p.problems, []);
  assert.deepEqual(p.message, m);
});
