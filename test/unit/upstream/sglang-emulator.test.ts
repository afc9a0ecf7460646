import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startSglangEmulator } from '../../fixtures/sglang-emulator';

const READ_TOOL = {
  type: 'function',
  function: { name: 'read', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
};
const MESSAGES = [{ role: 'user', content: 'Read the README' }];

const post = (url: string, body: unknown) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

test('SGLang emulator: chat completions split reasoning and parse Kimi calls; /generate returns real Kimi ids', async (t) => {
  const emu = await startSglangEmulator();
  try {
    assert.equal((await fetch(`${emu.url}/health`)).status, 200);
    const info = await (await fetch(`${emu.url}/get_model_info`)).json();
    assert.equal(info.model_path, emu.modelPath);

    const chat = await (await post(`${emu.url}/v1/chat/completions`, { model: 'x', messages: MESSAGES, tools: [READ_TOOL] })).json();
    const choice = chat.choices[0];
    assert.equal(choice.finish_reason, 'tool_calls');
    assert.equal(choice.matched_stop, 163586);
    assert.equal(choice.message.reasoning_content, 'The user wants me to use read.');
    assert.equal(choice.message.content, "I'll call read.");
    assert.deepEqual(choice.message.tool_calls[0], {
      index: 0,
      id: 'functions.read:0',
      type: 'function',
      function: { name: 'read', arguments: '{"path":"README.md"}' },
    });

    const afterTool = await (
      await post(`${emu.url}/v1/chat/completions`, {
        messages: [
          ...MESSAGES,
          { role: 'assistant', content: '', tool_calls: choice.message.tool_calls },
          { role: 'tool', tool_call_id: 'functions.read:0', content: '# Tokenscope' },
        ],
        tools: [READ_TOOL],
      })
    ).json();
    assert.equal(afterTool.choices[0].finish_reason, 'stop', 'prose after a tool result');
    assert.equal(afterTool.choices[0].message.tool_calls, null);

    const prompt = '<|im_user|>user<|im_middle|>hi<|im_end|><|im_assistant|>assistant<|im_middle|><think></think>';
    const withTools = `<|im_system|>tool_declare<|im_middle|>${JSON.stringify([READ_TOOL])}<|im_end|>${prompt}`;
    const gen = await (
      await post(`${emu.url}/generate`, { input_ids: emu.tokenizer.encode(withTools), sampling_params: { max_new_tokens: 256 } })
    ).json();
    assert.ok(gen.output_ids.includes(163595), 'section begin id');
    assert.ok(gen.output_ids.includes(163596), 'section end id');
    assert.equal(gen.output_ids.at(-1), 163586, 'stop token kept in output_ids');
    assert.deepEqual(gen.meta_info.finish_reason, { type: 'stop', matched: 163586 });
    assert.ok(gen.text.endsWith('<|tool_call_end|><|tool_calls_section_end|>'), 'stop token trimmed from text');
    assert.equal(gen.meta_info.completion_tokens, gen.output_ids.length);

    const cut = await (await post(`${emu.url}/generate`, { text: prompt, sampling_params: { max_new_tokens: 2 } })).json();
    assert.deepEqual(cut.meta_info.finish_reason, { type: 'length', length: 2 });
    assert.equal(cut.output_ids.length, 2);

    const stream = await (
      await post(`${emu.url}/generate`, { text: prompt, stream: true, sampling_params: { max_new_tokens: 64 } })
    ).text();
    const events = stream.split('\n\n').filter(Boolean);
    assert.equal(events.at(-1), 'data: [DONE]');
    const last = JSON.parse(events.at(-2)!.slice(6));
    const first = JSON.parse(events[0].slice(6));
    assert.equal(first.output_ids.length, 1);
    assert.ok(last.output_ids.length > 1, 'cumulative ids');
    assert.equal(last.meta_info.finish_reason.type, 'stop');
  } finally {
    await emu.close();
  }
});
