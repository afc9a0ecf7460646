/**
 * GLM-5.3-Flash ('glm53-flash'): the GLM-4.7 tag form and a JSON form with no close tag.
 *
 *   <think>REASONING</think>\nCONTENT\n<tool_call>NAME<arg_key>K</arg_key><arg_value>V</arg_value></tool_call><|observation|>
 *   CONTENT<tool_call>NAME>{"K": "V"}<tool_call>NAME>{…}
 *
 * SGLang `glm53_flash_detector.py` (class docstring: "JSON format (most common)", "Special-token format (less
 * common)"). Both forms open with the special token `<tool_call>` (id 154843 in zai-org/GLM-5.3-Flash, not the
 * three-character `<![`, which the detector's tests once used by mistake). A JSON-form call is `NAME>` and one JSON
 * object; it has no closer and ends with its JSON, so several calls sit back to back and the last one runs to the end of
 * the turn (the detector reads the arguments up to the next `<tool_call>`, a `</tool_call>` or the end). The chat
 * template writes earlier calls in the tag form, so render writes that form (as GLM-4.7 does, no newlines).
 *
 * The grammar is the GLM one (families/glm45/grammar.ts), with the JSON form read as a call; what departs from it is flagged:
 * text between `NAME>` and the JSON, a JSON array for the arguments, a `</tool_call>` after a JSON-form call (SGLang
 * leaves it in the content), JSON that never closes before the next call. JSON cut off by the end of the output is
 * `call-unclosed`.
 *
 * What the engines do with broken outputs, read from their code:
 * - SGLang `Glm53FlashDetector.detect_and_parse`: a text without `</tool_call>` is read as JSON form only, so a
 *   tag-form call that lost its closer comes back under its name with empty arguments `{}`; JSON that does not parse,
 *   and has no whole `{…}` inside, gives `{}` too. Calls are never dropped for being cut.
 * - vLLM registers no GLM-5.3-Flash parser; its glm47 parser takes only complete `<tool_call>…</tool_call>` spans, so
 *   a JSON-form call is never a call there.
 * - Dynamo: no GLM-5.3-Flash family in its parser list.
 */
import { fixture, noParser, noParserInfo, type FamilyVerdicts } from './shared/verdicts';
import { MARKERS, OBSERVATION, TOOL_MARKERS, glmGrammar, renderGlm } from './glm45/grammar';
import { modelKey, parseTurn, scoreText } from './shared';
import type { ModelFormat } from './shared/format';
import type { Family } from './types';

const grammar = glmGrammar('glm53-flash', { jsonForm: 'call', nameNewline: false });

const format: ModelFormat = {
  id: 'glm53-flash',
  displayName: 'GLM-5.3-Flash',
  markers: MARKERS,
  toolMarkers: TOOL_MARKERS,
  // zai-org/GLM-5.3-Flash (Hugging Face), z-ai/glm-5.3-flash (OpenRouter), and quantized repos named after them.
  matchesModel: (modelId) => /glm-?5\.3-?flash/.test(modelKey(modelId)),
  // Only the JSON form is this family's own: the tag form is GLM-4.7's, which reads the same.
  detectText: (text) =>
    scoreText(text, [
      [/<tool_call>[^\s<>{]+>\s*[{[]/, 30],
      [OBSERVATION, 1],
    ]),
  render: (m, opts) => renderGlm(m, opts, false),
  parse: (text) => parseTurn(grammar, text),
};

const SGLANG = 'sgl-project/sglang python/sglang/srt/function_call/glm53_flash_detector.py';
const VLLM_GLM47 = 'vllm-project/vllm vllm/tool_parsers/glm47_moe_tool_parser.py';

const verdicts: FamilyVerdicts = {
  family: 'glm53-flash',
  engines: {
    vllm: {
      release: '0.23.0',
      parser: 'glm47',
      code: VLLM_GLM47,
      evidence: `${fixture('vllm', 'glm47')} (tag form); ${VLLM_GLM47} @ b91ee1b47c8e (JSON form: only complete <tool_call>(.*?)(<arg_key>.*?)?</tool_call> spans are read)`,
      note: "vLLM registers no GLM-5.3-Flash parser (vllm/frontend/processing/tool_parsers/__init__.py @ 761f197523b7 lists glm45 and glm47); these verdicts are its glm47 parser's",
    },
    sglang: {
      release: 'main @ 5ed86bd7',
      parser: 'glm53',
      code: SGLANG,
      evidence: `${SGLANG} @ 5ed86bd7b167 (Glm53FlashDetector.detect_and_parse, _parse_json_format, _parse_json_args)`,
      note: 'read from the code, not from a recorded run; parser_names.py @ 042de61b names no glm53 parser, the detector\'s test routes GLM-5.3-Flash templates to "glm53"',
    },
    dynamo: noParserInfo(
      '3.0.0',
      'ai-dynamo/frontend-crates parsers/v2/README.md "Parser families" @ 0b8a06fe47d0 (no GLM-5.3-Flash family)',
    ),
  },
  cases: [
    {
      id: '5.a',
      class: 'unclosed-complete',
      calls: 'single',
      what: 'a tag-form call whose </tool_call> is missing after a complete <arg_value>',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <tool_call>… markup stays in content' },
        sglang: {
          outcome: 'cut-call-delivered',
          text: 'the call is delivered with empty arguments {}: without </tool_call> the text is read as the JSON form, and the <arg_key>/<arg_value> pairs are lost',
        },
        dynamo: noParser('Dynamo lists no GLM-5.3-Flash parser'),
      },
    },
    {
      id: '5.c',
      class: 'unclosed-truncated',
      calls: 'single',
      what: 'output stopped inside the JSON of a JSON-form call',
      verdicts: {
        vllm: { outcome: 'content', text: 'no call; the <tool_call>NAME>{… markup stays in content' },
        sglang: {
          outcome: 'cut-call-delivered',
          text: 'the call is delivered with empty arguments {} (the cut JSON does not parse and holds no whole {…})',
        },
        dynamo: noParser('Dynamo lists no GLM-5.3-Flash parser'),
      },
    },
    {
      id: '5.d',
      class: 'unclosed-complete',
      calls: 'multi',
      what: 'the last of several tag-form calls lacks only </tool_call>',
      verdicts: {
        vllm: { outcome: 'partial', text: 'the first call is delivered, the last one dropped' },
        sglang: {
          outcome: 'cut-call-delivered',
          text: 'both calls are delivered, the last with empty arguments {} (read as the JSON form)',
        },
        dynamo: noParser('Dynamo lists no GLM-5.3-Flash parser'),
      },
    },
    {
      id: '5.e',
      class: 'unclosed-truncated',
      calls: 'multi',
      what: 'the last of several JSON-form calls cut off mid-value',
      verdicts: {
        vllm: {
          outcome: 'content',
          text: 'no call at all: JSON-form calls have no </tool_call>, so the whole output, the complete first call included, is content',
        },
        sglang: { outcome: 'cut-call-delivered', text: 'both calls are delivered, the cut one with empty arguments {}' },
        dynamo: noParser('Dynamo lists no GLM-5.3-Flash parser'),
      },
    },
  ],
};

export const glm53Flash: Family<'glm53-flash'> = {
  id: 'glm53-flash',
  format,
  verdicts,
  tokenizer: { repo: 'zai-org/GLM-5.3-Flash' },
  repair: {
    openers: ['<tool_call>', '<arg_key>', '<arg_value>'],
    stripped: [],
    arguments: 'tagged',
    callIds: 'digest',
  },
};
