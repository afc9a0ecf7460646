import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UserError, type CaptureReader, type CapturedExchange } from '../../../src/core/model';
import { capturedChatRequest } from '../../../src/core/upstream/rerun';
import { brokenKimiCapture } from '../../fixtures/export/captures';

/** A store holding one exchange. */
function storeWith(x: CapturedExchange): CaptureReader {
  return { list: () => [x], get: (id) => (id === x.id ? x : undefined), readResponse: () => undefined };
}

test('what cannot be re-run is named by method and path: a GET without body, an Anthropic Messages request', () => {
  const get = { ...brokenKimiCapture().exchange, method: 'GET', path: '/openrouter/v1/models', requestBody: undefined };
  assert.throws(
    () => capturedChatRequest(storeWith(get), get.id),
    (e: unknown) => e instanceof UserError && e.message === `capture ${get.id} (GET /openrouter/v1/models) has no request body to re-run`,
  );
  const anthropic = {
    ...brokenKimiCapture().exchange,
    path: '/anthropic/v1/messages',
    requestBody: JSON.stringify({ model: 'claude-x', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] }),
  };
  assert.throws(
    () => capturedChatRequest(storeWith(anthropic), anthropic.id),
    (e: unknown) =>
      e instanceof UserError &&
      e.message ===
        `capture ${anthropic.id} (POST /anthropic/v1/messages) is not a Chat Completions request but anthropic-messages; re-runs replay Chat Completions requests`,
  );
});
