import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { analyze } from '../../../src/core/analyze';
import pinNotHonoured, { servedBy } from '../../../src/core/checks/pin-not-honoured';
import type { NormalizedRequest } from '../../../src/core/model';
import { normalizeRequest, parseResponseBody } from '../../../src/core/wire/index';
import { request, response, run } from './helpers';

function pinned(provider: NormalizedRequest['provider']): NormalizedRequest {
  return { ...request([]), provider };
}

describe('pin-not-honoured', () => {
  test('provider.only on one provider, another served: an error naming both', () => {
    const f = run(pinNotHonoured, {
      request: pinned({ only: ['novita'], allowFallbacks: false }),
      response: response({ provider: 'Chutes', message: { content: 'Hi.' } }),
    }).findings;
    assert.equal(f.length, 1);
    assert.equal(f[0].rule, 'pin-not-honoured');
    assert.equal(f[0].severity, 'error');
    assert.match(f[0].message, /"novita" \(provider\.only\) but "Chutes" served it/);
  });

  test('provider.order with allow_fallbacks false is a pin too; with fallbacks allowed it is only a preference', () => {
    const res = response({ provider: 'Chutes', message: { content: 'Hi.' } });
    const strict = run(pinNotHonoured, {
      request: pinned({ order: ['fireworks', 'novita'], allowFallbacks: false }),
      response: res,
    }).findings;
    assert.equal(strict.length, 1);
    assert.match(strict[0].message, /"fireworks", "novita" \(provider\.order with allow_fallbacks false\)/);
    assert.deepEqual(run(pinNotHonoured, { request: pinned({ order: ['fireworks'] }), response: res }).findings, []);
    assert.deepEqual(run(pinNotHonoured, { request: pinned({ order: ['fireworks'], allowFallbacks: true }), response: res }).findings, []);
  });

  test('the pinned provider served: no finding, display names meeting slugs loosely', () => {
    for (const [slug, name] of [
      ['novita', 'NovitaAI'],
      ['atlas-cloud', 'AtlasCloud'],
      ['deepinfra/fp4', 'DeepInfra'],
      ['moonshotai', 'Moonshot AI'],
      ['z-ai', 'Z.AI'],
    ]) {
      assert.deepEqual(
        run(pinNotHonoured, {
          request: pinned({ only: [slug], allowFallbacks: false }),
          response: response({ provider: name, message: { content: 'Hi.' } }),
        }).findings,
        [],
        `${slug} ~ ${name}`,
      );
      assert.ok(servedBy([slug], name));
    }
    assert.ok(!servedBy(['novita'], 'Chutes'));
    assert.ok(!servedBy([''], 'Chutes'), 'an empty slug pins nothing');
  });

  test('nothing to judge: no pin, or no provider named in the response', () => {
    assert.deepEqual(
      run(pinNotHonoured, { request: request([]), response: response({ provider: 'Chutes', message: { content: 'Hi.' } }) }).findings,
      [],
    );
    assert.deepEqual(
      run(pinNotHonoured, { request: pinned({ only: ['novita'] }), response: response({ message: { content: 'Hi.' } }) }).findings,
      [],
    );
  });

  test('end to end from the bodies: a re-run pinned to novita that Chutes answered', () => {
    const req = normalizeRequest(
      {
        model: 'moonshotai/kimi-k2-0905',
        messages: [{ role: 'user', content: 'hi' }],
        provider: { only: ['novita'], allow_fallbacks: false },
      },
      { path: '/api/v1/chat/completions' },
    );
    const body = JSON.stringify({
      id: 'gen-1',
      provider: 'Chutes',
      model: 'moonshotai/kimi-k2-0905',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi.' }, finish_reason: 'stop' }],
    });
    const a = analyze({ request: req, response: parseResponseBody(body, { path: '/api/v1/chat/completions' }) });
    assert.deepEqual(a.findings.filter((f) => f.rule === 'pin-not-honoured').length, 1);
  });
});
