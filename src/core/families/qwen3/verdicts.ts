// Qwen3 writes Hermes `<tool_call>` JSON and is served with the hermes parser (vLLM `hermes`, SGLang `hermes` or
// `qwen25`, Dynamo `hermes`): the verdicts are Hermes' (hermes/verdicts.ts, from ai-dynamo/frontend-crates
// conformance/toolcalling/fixtures-batch-v1/*/hermes/TOOLCALLING.batch.5.yaml @ 8d4b1bff82df).
import hermes from '../hermes/verdicts';
import type { FamilyVerdicts } from '../shared/verdicts';

const verdicts: FamilyVerdicts = {
  ...hermes,
  family: 'qwen3',
  engines: {
    ...hermes.engines,
    sglang: { ...hermes.engines.sglang, note: 'Qwen2.5 deployments use qwen25 (qwen25_detector.py), which the fixtures do not cover' },
  },
};

export default verdicts;
