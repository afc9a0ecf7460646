/**
 * The family registry: every `ModelFormat`, lookup by id, and family detection from a model id or from
 * the markers in a text.
 *
 * What every format guarantees (details in base.ts and each module's header):
 * - `parse` never throws; truncation and off-grammar markup become `problems`. Cut-off calls are kept
 *   in the message with what arrived. `section-unclosed`/`call-unclosed` carry `expectedAt` (right after
 *   the last complete part) and the missing `marker`; a cut-short end marker is also `marker-truncated`.
 * - `reasoning`/`content` come back trimmed; ids only exist for Kimi (`functions.NAME:IDX`).
 * - Segments nest only as section ⊃ call ⊃ (call-id | call-name | arguments), and call-id ⊃ call-name.
 * - XML-argument families (qwen3-coder, glm45, minimax-m2) give arguments as canonical compact JSON.
 * - `parse(render(m).text).message` equals `m` for trimmed messages (ids dropped outside Kimi; Kimi keeps an id
 *   that is a Kimi id for its call, canonical or bare, and writes `functions.NAME:INDEX` for any other).
 * - `render(m, { complete: false })` (a turn cut short) is a prefix of `render(m)`: no end-of-turn marker, and the
 *   block the model was in when it stopped (reasoning nothing followed, the last call, its section) left open.
 */
import { UserError, type FamilyId } from '../model';
import { deepseekV3, deepseekV31 } from './deepseek';
import { glm45, glm47, ling3 } from './glm';
import { deepseekV32, deepseekV4, deepseekV41 } from './deepseek-dsml';
import { gemma4 } from './gemma4';
import { llama4Pythonic } from './llama4-pythonic';
import { seedOss } from './seed-oss';
import { harmony } from './harmony';
import { kimi } from './kimi';
import { kimiK3 } from './kimi-k3';
import { step3 } from './step3';
import { minimaxM2 } from './minimax';
import { minimaxM3 } from './minimax-m3';
import { qwen3 } from './qwen3';
import { qwen3Coder } from './qwen3-coder';
import { hermes } from './hermes';
import { jamba } from './jamba';
import { llama3Json } from './llama';
import { mistral } from './mistral';
import { nemotron } from './nemotron';
import { phi4 } from './phi4';
import type { ModelFormat } from './types';

export type { ModelFormat } from './types';

/** Every family, one per `FamilyId`. Marker-score ties go to the earlier entry. */
export const formats: readonly ModelFormat[] = [
  kimi,
  deepseekV31,
  deepseekV3,
  qwen3Coder,
  qwen3,
  glm45,
  harmony,
  minimaxM2,
  hermes,
  mistral,
  llama3Json,
  jamba,
  nemotron,
  phi4,
  glm47,
  ling3,
  deepseekV32,
  deepseekV4,
  deepseekV41,
  gemma4,
  llama4Pythonic,
  seedOss,
  minimaxM3,
  kimiK3,
  step3,
];

/** The format of a family id; an id from outside (a `--family` flag, a saved capture) may be unknown. */
export function getFormat(id: FamilyId): ModelFormat {
  const format = formats.find((f) => f.id === id);
  if (!format) throw new UserError(`unknown model family '${id}' (known: ${formats.map((f) => f.id).join(', ')})`);
  return format;
}

/**
 * The family of an exchange: from the model id when one matches (`moonshotai/kimi-k2-0905`,
 * `qwen/qwen3-coder:free`…), else from the markers in `text` (highest `detectText` score wins; ties go
 * to the earlier format in `formats`). Undefined when neither tells.
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
