// Llama 3 / 4 JSON tool calls (`<|python_tag|>{"name": …, "arguments": …}`, `;` between calls): recorded behaviour of
// vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on the same truncated inputs (ai-dynamo/frontend-crates
// conformance/toolcalling/fixtures-batch-v1/*/llama3_json/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df). The suite has no
// orphan-close case for this family: its output has no delimiter pair.
import { fixture, type FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  family: 'llama3-json',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'llama3_json',
      code: 'vllm-project/vllm vllm/tool_parsers/llama_tool_parser.py',
      evidence: fixture('vllm', 'llama3_json'),
    },
    sglang: {
      release: '0.5.12.post1',
      parser: 'llama3',
      code: 'sgl-project/sglang python/sglang/srt/function_call/llama32_detector.py',
      evidence: fixture('sglang', 'llama3_json'),
    },
    dynamo: {
      release: '3.0.0',
      parser: 'llama3_json',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/base_json_parser.rs',
      evidence: fixture('dynamo', 'llama3_json'),
    },
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: "the call object's closing brace missing, its arguments complete",
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole text, <|python_tag|> included, stays in content' },
        sglang: { outcome: 'content', text: 'no call; the JSON text goes to content (<|python_tag|> stripped)' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the arguments',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the whole text stays in content' },
        sglang: { outcome: 'content', text: 'no call; the cut JSON goes to content (<|python_tag|> stripped)' },
        dynamo: { outcome: 'dropped', text: 'no call, empty content' },
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several calls lacks only its closing brace',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all; the whole text stays in content' },
        sglang: { outcome: 'mixed', text: 'the first call is delivered; the unclosed last one stays in content as JSON text' },
        dynamo: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several calls cut off mid-value',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call at all; the whole text stays in content' },
        sglang: { outcome: 'mixed', text: 'the first call is delivered; the cut one stays in content as JSON text' },
        dynamo: { outcome: 'partial', text: 'the complete call is delivered, the cut one dropped' },
      },
    },
  ],
};

export default verdicts;
