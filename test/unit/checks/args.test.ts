import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import argsInvalidJson from '../../../src/core/checks/args-invalid-json';
import argsSchema from '../../../src/core/checks/args-schema';
import toolUnknown from '../../../src/core/checks/tool-unknown';
import { CONTINUE_XML_ARGS, K, KIMI, call, request, response, run, slice } from './helpers';

const withCall = (name: string, args: string, model?: string) =>
  response({ model, message: { toolCalls: [call(name, args, `functions.${name}:0`)] }, finishReason: 'tool_calls' });

const READ = {
  name: 'read',
  parameters: {
    type: 'object',
    properties: { filePath: { type: 'string' }, limit: { type: 'integer' } },
    required: ['filePath'],
    additionalProperties: false,
  },
};

describe('args-invalid-json', () => {
  test('XML-style arguments (Continue #11453)', () => {
    const r = run(argsInvalidJson, { response: withCall('ls', CONTINUE_XML_ARGS) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'error');
    assert.match(r.findings[0].message, /XML-style markup \(<tool_call>…\)/);
  });

  test('an unterminated string (OpenCode #20650) points at the error position', () => {
    const args = '{"filePath":": [';
    const r = run(argsInvalidJson, { response: withCall('read', args) });
    assert.equal(r.findings.length, 1);
    assert.match(r.findings[0].message, /not valid JSON .*16 characters received/);
    assert.equal(r.findings[0].location, 'tool_calls[0].arguments');
    assert.ok(r.findings[0].start! >= r.text.indexOf(args) && r.findings[0].end! <= r.text.indexOf(args) + args.length);
  });

  test('empty arguments warn; arrays, null and double-encoded objects are errors', () => {
    assert.equal(run(argsInvalidJson, { response: withCall('ls', '') }).findings[0].severity, 'warning');
    assert.match(run(argsInvalidJson, { response: withCall('ls', '["src"]') }).findings[0].message, /an array, not a JSON object/);
    assert.match(run(argsInvalidJson, { response: withCall('ls', 'null') }).findings[0].message, /null, not a JSON object/);
    assert.match(
      run(argsInvalidJson, { response: withCall('ls', JSON.stringify('{"dirPath":"src"}')) }).findings[0].message,
      /double-encoded/,
    );
  });

  test('runs without any family (model unknown)', () => {
    const r = run(argsInvalidJson, { response: withCall('ls', CONTINUE_XML_ARGS, 'acme/unknown-model') });
    assert.equal(r.findings.length, 1);
    assert.equal(slice(r, r.findings[0]), '<tool_call>');
  });

  test('valid objects are silent, and a call cut off mid-arguments is left to call-unclosed', () => {
    assert.deepEqual(run(argsInvalidJson, { response: withCall('read', '{"filePath":"src/app.ts"}') }).findings, []);
    const cut = `${K.SECTION_BEGIN}${K.CALL_BEGIN}functions.read:0${K.ARG_BEGIN}{"filePath":"src/a`;
    assert.deepEqual(run(argsInvalidJson, { nativeText: cut, model: KIMI }).findings, []);
  });
});

describe('args-schema', () => {
  test('"expected string, received object" (OpenCode #6918): the failing path, the type received, the key underlined', () => {
    const r = run(argsSchema, { response: withCall('read', '{"filePath": {"path": "src/app.ts"}}'), request: request([READ]) });
    assert.equal(r.findings.length, 1);
    const [f] = r.findings;
    assert.equal(f.severity, 'error');
    assert.match(f.message, /at \/filePath: must be string, got object/);
    assert.equal(slice(r, f), '"filePath"');
  });

  test('missing required property and extra property', () => {
    const missing = run(argsSchema, { response: withCall('read', '{"limit": 20}'), request: request([READ]) });
    assert.match(missing.findings[0].message, /at \/: must have required property 'filePath'/);
    const extra = run(argsSchema, { response: withCall('read', '{"filePath":"a","offset":3}'), request: request([READ]) });
    assert.match(extra.findings[0].message, /must NOT have additional properties \(offset\)/);
  });

  test('draft 2020-12 schemas are validated too; an uncompilable schema is reported as info', () => {
    const modern = { ...READ, parameters: { $schema: 'https://json-schema.org/draft/2020-12/schema', ...READ.parameters } };
    assert.equal(run(argsSchema, { response: withCall('read', '{"filePath": 3}'), request: request([modern]) }).findings.length, 1);
    const broken = { name: 'read', parameters: { type: 'object', properties: { filePath: { type: 'strin' } } } };
    const r = run(argsSchema, { response: withCall('read', '{"filePath": "a"}'), request: request([broken]) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'info');
  });

  test('valid arguments, no request, unknown tools and non-JSON arguments are silent', () => {
    assert.deepEqual(run(argsSchema, { response: withCall('read', '{"filePath":"a","limit":5}'), request: request([READ]) }).findings, []);
    assert.deepEqual(run(argsSchema, { response: withCall('read', '{"filePath": 1}') }).findings, []);
    assert.deepEqual(run(argsSchema, { response: withCall('reed', '{"filePath": 1}'), request: request([READ]) }).findings, []);
    assert.deepEqual(run(argsSchema, { response: withCall('read', CONTINUE_XML_ARGS), request: request([READ]) }).findings, []);
  });
});

describe('tool-unknown', () => {
  test('a call to a tool the request did not offer lists what was offered', () => {
    const r = run(toolUnknown, { response: withCall('read_file', '{}'), request: request([READ, { name: 'bash' }]) });
    assert.equal(r.findings.length, 1);
    assert.equal(r.findings[0].severity, 'error');
    assert.match(r.findings[0].message, /"read_file", which is not among the 2 tools the request offered \(read, bash\)/);
    assert.equal(slice(r, r.findings[0]), 'read_file');
  });

  test('a request without tools only warns', () => {
    const r = run(toolUnknown, { response: withCall('read', '{}'), request: request([]) });
    assert.equal(r.findings[0].severity, 'warning');
  });

  test('offered tools and a missing request are silent', () => {
    assert.deepEqual(run(toolUnknown, { response: withCall('read', '{}'), request: request([READ]) }).findings, []);
    assert.deepEqual(run(toolUnknown, { response: withCall('anything', '{}') }).findings, []);
  });
});
