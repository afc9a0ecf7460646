/**
 * The family registry: one line per family. Each family module (kimi-k2.ts, hermes.ts…) holds its grammar, its
 * engine verdicts, its tokenizer and its repair facts (types.ts); this file only lists them, looks them up by id, and
 * tells the family of an exchange from a model id or from the markers in a text.
 *
 * What every grammar guarantees (details in formats/base.ts and each grammar's header):
 * - `parse` never throws; truncation and off-grammar markup become `problems`. Cut-off calls are kept
 *   in the message with what arrived. `section-unclosed`/`call-unclosed` carry `expectedAt` (right after
 *   the last complete part) and the missing `marker`; a cut-short end marker is also `marker-truncated`.
 * - `reasoning`/`content` come back trimmed.
 * - Segments nest only as section ⊃ call ⊃ (call-id | call-name | arguments), and call-id ⊃ call-name.
 * - `parse(render(m).text).message` equals `m` for trimmed messages (ids dropped where the grammar has none).
 * - `render(m, { complete: false })` (a turn cut short) is a prefix of `render(m)`.
 */
import { UserError, type FamilyId } from '../model';
import type { ModelFormat } from '../formats/types';
import { deepseekV3 } from './deepseek-v3';
import { deepseekV31 } from './deepseek-v31';
import { deepseekV32 } from './deepseek-v32';
import { deepseekV4 } from './deepseek-v4';
import { deepseekV41 } from './deepseek-v41';
import { gemma4 } from './gemma4';
import { glm45 } from './glm45';
import { glm47 } from './glm47';
import { gptOss } from './gpt-oss';
import { hermes } from './hermes';
import { jamba } from './jamba';
import { kimiK2 } from './kimi-k2';
import { kimiK3 } from './kimi-k3';
import { ling3 } from './ling3';
import { llama3Json } from './llama3-json';
import { llama4Pythonic } from './llama4-pythonic';
import { minimaxM2 } from './minimax-m2';
import { minimaxM3 } from './minimax-m3';
import { mistral } from './mistral';
import { nemotron } from './nemotron';
import { phi4 } from './phi4';
import { qwen3 } from './qwen3';
import { qwen3Coder } from './qwen3-coder';
import { seedOss } from './seed-oss';
import { step3 } from './step3';
// New family imports: one line each above this comment.
import type { Family } from './types';

export type { Family, RepairFacts } from './types';
export type { ModelFormat } from '../formats/types';

/** Every family by id: a `FamilyId` without its module, or a module under another id, is a compile error. */
const REGISTRY: { [K in FamilyId]: Family<K> } = {
  'kimi-k2': kimiK2,
  'deepseek-v31': deepseekV31,
  'deepseek-v3': deepseekV3,
  'qwen3-coder': qwen3Coder,
  qwen3: qwen3,
  glm45: glm45,
  'gpt-oss': gptOss,
  'minimax-m2': minimaxM2,
  hermes: hermes,
  mistral: mistral,
  'llama3-json': llama3Json,
  jamba: jamba,
  nemotron: nemotron,
  phi4: phi4,
  glm47: glm47,
  ling3: ling3,
  'deepseek-v32': deepseekV32,
  'deepseek-v4': deepseekV4,
  'deepseek-v41': deepseekV41,
  gemma4: gemma4,
  'llama4-pythonic': llama4Pythonic,
  'seed-oss': seedOss,
  'minimax-m3': minimaxM3,
  'kimi-k3': kimiK3,
  step3: step3,
  // New families: one line each above this comment, as `'id': name,`.
};

/** Detection order: marker-score ties go to the earlier family. */
const ORDER: readonly FamilyId[] = [
  'kimi-k2',
  'deepseek-v31',
  'deepseek-v3',
  'qwen3-coder',
  'qwen3',
  'glm45',
  'gpt-oss',
  'minimax-m2',
  'hermes',
  'mistral',
  'llama3-json',
  'jamba',
  'nemotron',
  'phi4',
  'glm47',
  'ling3',
  'deepseek-v32',
  'deepseek-v4',
  'deepseek-v41',
  'gemma4',
  'llama4-pythonic',
  'seed-oss',
  'minimax-m3',
  'kimi-k3',
  'step3',
  // A family that must win marker ties over an older one goes above it; the rest follow in registry order.
];

/** Every family, in detection order. */
export const families: readonly Family[] = [...ORDER, ...(Object.keys(REGISTRY) as FamilyId[]).filter((id) => !ORDER.includes(id))].map((id) => REGISTRY[id]);

/** Every family's grammar, in detection order. */
export const formats: readonly ModelFormat[] = families.map((f) => f.format);

/** A family by id; an id from outside (a `--family` flag, a saved capture) may be unknown. */
export function getFamily(id: FamilyId): Family {
  const family = Object.hasOwn(REGISTRY, id) ? REGISTRY[id] : undefined;
  if (!family) throw new UserError(`unknown model family '${id}' (known: ${families.map((f) => f.id).join(', ')})`);
  return family;
}

/** The grammar of a family id. */
export function getFormat(id: FamilyId): ModelFormat {
  return getFamily(id).format;
}

/**
 * The family of an exchange: from the model id when one matches (`moonshotai/kimi-k2-0905`,
 * `qwen/qwen3-coder:free`…), else from the markers in `text` (highest `detectText` score wins; ties go
 * to the earlier family; a family counts only when the text holds one of its own markers, or its calls need none).
 * Undefined when neither tells: the analysis then says the family is unknown, and what markup it saw.
 */
export function detectFamily(
  modelId?: string,
  text?: string,
): { format: ModelFormat; source: 'model-id' | 'markers' } | undefined {
  if (modelId) {
    const byId = formats.find((f) => f.matchesModel(modelId));
    if (byId) return { format: byId, source: 'model-id' };
  }
  if (text) {
    let best: ModelFormat | undefined;
    let bestScore = 0;
    for (const f of formats) {
      // A JSON `{"name": …, "arguments": …}` between markers no family knows is no Qwen3 call.
      if (!f.markerless && !holdsOwnMarker(f, text)) continue;
      const score = f.detectText(text);
      if (score > bestScore) {
        best = f;
        bestScore = score;
      }
    }
    if (best) return { format: best, source: 'markers' };
  }
  return undefined;
}

/** The text holds one of the family's markers, or a placeholder of one of its marker ids (`<|reserved_token_163595|>`). */
function holdsOwnMarker(f: ModelFormat, text: string): boolean {
  if (f.markers.some((m) => text.includes(m)) || f.toolMarkers.some((m) => text.includes(m))) return true;
  if (!f.markerIds || !text.includes('<|reserved')) return false;
  for (const m of text.matchAll(/<\|reserved(?:_special)?_token_(\d+)\|>/g)) if (f.markerIds[Number(m[1])]) return true;
  return false;
}
