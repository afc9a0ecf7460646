// Nemotron (`<TOOLCALL>[…]</TOOLCALL>`, the suite's nemotron_deci): recorded behaviour of Dynamo 3.0.0; vLLM 0.23.0 and
// SGLang 0.5.12.post1 have no parser for it (ai-dynamo/frontend-crates
// conformance/toolcalling/fixtures-batch-v1/*/nemotron_deci/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import { fixture, noParser, noParserInfo, type FamilyVerdicts } from '../shared/verdicts';
import { wrappedJsonListCases } from '../shared/wrapped-json-list';

const verdicts: FamilyVerdicts = {
  family: 'nemotron',
  engines: {
    vllm: noParserInfo('0.23.0', fixture('vllm', 'nemotron_deci')),
    sglang: noParserInfo('0.5.12.post1', fixture('sglang', 'nemotron_deci')),
    dynamo: {
      release: '3.0.0',
      parser: 'nemotron_deci',
      code: 'ai-dynamo/dynamo lib/parsers/src/tool_calling/json/base_json_parser.rs',
      evidence: fixture('dynamo', 'nemotron_deci'),
    },
  },
  cases: wrappedJsonListCases('<TOOLCALL>', () => ({
    vllm: noParser('"vLLM has no parser for family=\'nemotron_deci\'"'),
    sglang: noParser('"SGLang has no detector for family=\'nemotron_deci\'"'),
  })),
};

export default verdicts;
