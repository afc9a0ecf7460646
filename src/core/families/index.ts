/**
 * The family registry: one line per family. Each family module (kimi-k2/, xlam.ts…) holds its grammar, its
 * engine verdicts, its tokenizer and its repair facts (types.ts); this file only lists them, looks them up by id, and
 * tells the family of an exchange from a model id or from the markers in a text.
 *
 * What every grammar guarantees (details in families/shared/index.ts and each grammar's header):
 * - `parse` never throws; truncation and off-grammar markup become `problems`. Cut-off calls are kept
 *   in the message with what arrived. `section-unclosed`/`call-unclosed` carry `expectedAt` (right after
 *   the last complete part) and the missing `marker`; a cut-short end marker is also `marker-truncated`.
 * - `reasoning`/`content` come back trimmed.
 * - Segments nest only as section ⊃ call ⊃ (call-id | call-name | arguments), and call-id ⊃ call-name.
 * - `parse(render(m).text).message` equals `m` for trimmed messages (ids dropped where the grammar has none).
 * - `render(m, { complete: false })` (a turn cut short) is a prefix of `render(m)`.
 */
import { UserError } from '../model';
import type { FamilyId } from './ids';
import type { ModelFormat } from './shared/format';
import { NeedleScan, needlesFor, textIndex, withTextIndex } from './shared/text';
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
import { glm53Flash } from './glm53-flash';
import { cohereCommand } from './cohere-command';
import { gigachat3, gigachat35 } from './gigachat';
import { internlm } from './internlm';
import { granite3, granite4, granite42 } from './granite';
import { inkling } from './inkling';
import { k2Horizon } from './k2-horizon';
import { lfm2 } from './lfm2';
import { hunyuan, hunyuanV3 } from './hunyuan';
import { functionaryV31 } from './functionary';
import { olmo3 } from './olmo3';
import { apertus } from './apertus';
import { dots } from './dots';
import { reka } from './reka';
import { poolsideV1 } from './poolside';
import { trinity } from './trinity';
import { longcat } from './longcat';
import { minicpm5 } from './minicpm5';
import { ernie45 } from './ernie45';
import { functiongemma } from './functiongemma';
import { granite20bFc } from './granite-20b-fc';
import { museGlimmer } from './muse-glimmer';
import { solarOpen2 } from './solar-open2';
import { xlam } from './xlam';
import { iquestQ1 } from './iquest-q1';
import { functionaryV32 } from './functionary-v32';
// New family imports: one line each above this comment.
import type { Family } from './types';

export type { Family, RepairFacts } from './types';
export type { ModelFormat } from './shared/format';

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
  'glm53-flash': glm53Flash,
  'cohere-command': cohereCommand,
  gigachat3: gigachat3,
  gigachat35: gigachat35,
  internlm: internlm,
  granite3: granite3,
  granite4: granite4,
  granite42: granite42,
  inkling: inkling,
  'k2-horizon': k2Horizon,
  lfm2: lfm2,
  hunyuan: hunyuan,
  'hunyuan-v3': hunyuanV3,
  'functionary-v31': functionaryV31,
  olmo3: olmo3,
  apertus: apertus,
  dots: dots,
  reka: reka,
  'poolside-v1': poolsideV1,
  trinity: trinity,
  longcat: longcat,
  minicpm5: minicpm5,
  ernie45: ernie45,
  functiongemma: functiongemma,
  'granite-20b-fc': granite20bFc,
  'muse-glimmer': museGlimmer,
  'solar-open2': solarOpen2,
  xlam: xlam,
  'iquest-q1': iquestQ1,
  'functionary-v32': functionaryV32,
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
  'glm53-flash',
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
export const families: readonly Family[] = [...ORDER, ...(Object.keys(REGISTRY) as FamilyId[]).filter((id) => !ORDER.includes(id))].map(
  (id) => REGISTRY[id],
);

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
export function detectFamily(modelId?: string, text?: string): { format: ModelFormat; source: 'model-id' | 'markers' } | undefined {
  if (modelId) {
    const byId = formats.find((f) => f.matchesModel(modelId));
    if (byId) return { format: byId, source: 'model-id' };
  }
  if (text) {
    // Every family's signatures are looked for in one index of the text (families/shared/text.ts).
    const best = withTextIndex(text, () => byMarkers(text));
    if (best) return { format: best, source: 'markers' };
  }
  return undefined;
}

function byMarkers(text: string): ModelFormat | undefined {
  let best: ModelFormat | undefined;
  let bestScore = 0;
  const present = markersIn(text);
  let reserved: Set<number> | undefined;
  for (const f of formats) {
    // A JSON `{"name": …, "arguments": …}` between markers no family knows is no Qwen3 call.
    if (!f.markerless && !holdsOwnMarker(f, present, () => (reserved ??= reservedIds(text)))) continue;
    const score = f.detectText(text);
    if (score > bestScore) {
      best = f;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The text holds one of the family's markers (`present`: the markers the text holds), or a placeholder of one of its
 * marker ids (`<|reserved_token_163595|>`; `reserved`: the ids of the placeholders in the text).
 */
function holdsOwnMarker(f: ModelFormat, present: ReadonlySet<string>, reserved: () => ReadonlySet<number>): boolean {
  if (f.markers.some((m) => present.has(m)) || f.toolMarkers.some((m) => present.has(m))) return true;
  if (!f.markerIds) return false;
  for (const id of reserved()) if (f.markerIds[id]) return true;
  return false;
}

let markerScan: { re: RegExp; needles: (string | RegExp)[]; within: Map<string, string[]> } | undefined;

/**
 * Every marker of every family that occurs in `text`, found in one pass (not one search per marker per family): at
 * each place a marker may start, the longest marker there and each marker that is a prefix of it (`''` is in any text).
 */
function markersIn(text: string): Set<string> {
  if (!markerScan) {
    const all = [...new Set(formats.flatMap((f) => [...f.markers, ...f.toolMarkers]))]
      .filter((m) => m !== '')
      .sort((a, b) => b.length - a.length);
    const within = new Map(all.map((m) => [m, all.filter((p) => m.startsWith(p))]));
    const re = new RegExp(all.map((m) => m.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|'), 'y');
    markerScan = { re, needles: needlesFor(all), within };
  }
  const { re, needles, within } = markerScan;
  const present = new Set<string>(['']);
  const scan = new NeedleScan(text, needles);
  for (let at = scan.next(0); at >= 0; at = scan.next(at + 1)) {
    re.lastIndex = at;
    const m = re.exec(text);
    if (m) for (const p of within.get(m[0])!) present.add(p);
  }
  return present;
}

/** The ids of the marker placeholders (`<|reserved_token_163595|>`, `<|reserved_special_token_3|>`) in `text`. */
function reservedIds(text: string): Set<number> {
  const ids = new Set<number>();
  if (textIndex(text).first('<|reserved') < 0) return ids;
  for (const m of text.matchAll(/<\|reserved(?:_special)?_token_(\d+)\|>/g)) ids.add(Number(m[1]));
  return ids;
}
