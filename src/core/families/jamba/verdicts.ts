// AI21 Jamba (`<tool_calls>[…]</tool_calls>`): recorded behaviour of vLLM 0.23.0, SGLang 0.5.12.post1 and Dynamo 3.0.0 on
// the same truncated inputs (ai-dynamo/frontend-crates conformance/toolcalling/fixtures-batch-v1/*/jamba/TOOLCALLING.batch.5.yaml
// @ 8d4b1bff82df). vLLM's detector needs the closing </tool_calls> and leaves everything in content; SGLang has no detector.
import { fixture, noParser, noParserInfo, type FamilyVerdicts } from '../shared/verdicts';
import { wrappedJsonListCases } from '../shared/wrapped-json-list';

const verdicts: FamilyVerdicts = {
  family: 'jamba',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'jamba',
      code: 'vllm-project/vllm vllm/tool_parsers/jamba_tool_parser.py',
      evidence: fixture('vllm', 'jamba'),
    },
    sglang: noParserInfo('0.5.12.post1', fixture('sglang', 'jamba')),
    dynamo: {
      release: '3.0.0',
      parser: 'jamba',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/base_json_parser.rs',
      evidence: fixture('dynamo', 'jamba'),
    },
  },
  cases: wrappedJsonListCases('<tool_calls>', (id) => ({
    vllm:
      id === '5.b'
        ? { outcome: 'content', text: 'no call; the list and the orphan </tool_calls> stay in content' }
        : { outcome: 'content', text: 'no call; the unterminated <tool_calls> wrapper stays in content' },
    sglang: noParser('"SGLang has no detector for family=\'jamba\'"'),
  })),
};

export default verdicts;
