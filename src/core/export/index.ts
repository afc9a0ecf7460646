/**
 * Repro export and import: the entry points the CLI and the extension call.
 *
 *   const r = prepareRepro(readCapture(store, id), { patterns, tokenscopeVersion });  // redact, then analyse
 *   previewRedactions(readCapture(store, id), { patterns })                          // before saving
 *   exportText([r], 'markdown')  /  await exportToFile([r], 'bundle', path)
 *   await importText(store, text, fileName)                                          // HAR or bundle
 */
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { findCapture } from '../capture/store';
import { UserError, type CaptureReader } from '../model';
import { containsSecret } from '../redact';
import { BUNDLE_EXTENSION } from '../capture/bundle-read';
import { writeBundle } from './bundle';
import { writeCurl } from './curl';
import { writeHar } from './har';
import { writeMarkdown } from './markdown';
import { prepareRepro, readCapture, type Repro, type ReproOptions } from './repro';
import { writeK2vv, writePromptfoo } from './testcase';
import { fsWhy } from '../fs-errors';

export { BUNDLE_EXTENSION, BUNDLE_FORMAT, BUNDLE_VERSION, readBundle, type LoadedBundle } from '../capture/bundle-read';
export { writeBundle, type ReproBundleV1 } from './bundle';
export { curlCommand, replayOf, rerunCommand, writeCurl, type Replay } from './curl';
export { readHar, writeHar, type Har, type HarImport } from './har';
export { importCaptures, importText, parseImport, type ParsedImport } from './import';
export { excerptAround, markdownIssue, writeMarkdown } from './markdown';
export {
  parseRedactPattern,
  presetPattern,
  previewRedactions,
  PRESET_NAMES,
  type CaptureInput,
  type RedactionItem,
  type UserPattern,
} from './redaction';
export { prepareRepro, readCapture, replayPin, withTokens, type Repro, type ReproOptions } from './repro';
export { withReplaySlug } from './slugs';
export { k2vvSample, writeK2vv, writePromptfoo, type K2vvSample } from './testcase';

export const EXPORT_FORMATS = ['bundle', 'markdown', 'curl', 'har', 'k2vv', 'promptfoo'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function isExportFormat(s: string): s is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(s);
}

/** File name ending for each format. */
export const EXPORT_EXTENSIONS: Record<ExportFormat, string> = {
  bundle: BUNDLE_EXTENSION,
  markdown: '.md',
  curl: '.sh',
  har: '.har',
  k2vv: '.k2vv.jsonl',
  promptfoo: '.promptfooconfig.yaml',
};

/** `tokenscope-<id><ext>`, or `tokenscope-session-<id>.har` for several exchanges. */
export function defaultFileName(repros: Repro[], format: ExportFormat): string {
  const first = repros[0]?.exchange;
  const name = repros.length > 1 ? `session-${first?.sessionId ?? 'export'}` : (first?.id ?? 'export');
  return `tokenscope-${name.replace(/[^\w.-]+/g, '_')}${EXPORT_EXTENSIONS[format]}`;
}

/**
 * The export as text. Only HAR holds several exchanges (a session); the other formats describe one.
 * Every format's output has been through the redaction pass and its final guard.
 */
export function exportText(repros: Repro[], format: ExportFormat): string {
  const text = composeExport(repros, format);
  refuseSecrets(repros, text);
  return text;
}

/**
 * The last guard before an export leaves: one that still holds a detected secret (a key the model streamed over
 * several events, which redaction cannot cut out of the raw stream, or any key shape in the composed text) is refused
 * with one line, and nothing is written or printed.
 */
function refuseSecrets(repros: Repro[], text: string): void {
  const split = repros.find((r) => r.redactions.some((x) => x.label === 'split-key'));
  if (split) {
    throw new UserError(
      `export refused: capture ${split.exchange.id} holds a key the model streamed over several events, which the export would reassemble; nothing was written`,
    );
  }
  if (containsSecret(text))
    throw new UserError(
      'export refused: the export still holds a key-shaped string after redaction; nothing was written (add a --redact pattern)',
    );
}

function composeExport(repros: Repro[], format: ExportFormat): string {
  if (repros.length === 0) throw new UserError('nothing to export: no exchanges');
  if (format === 'har') return writeHar(repros);
  if (repros.length > 1) throw new UserError(`--format ${format} describes one exchange; use --format har for a session`);
  const r = repros[0];
  switch (format) {
    case 'bundle':
      return writeBundle(r);
    case 'markdown':
      return writeMarkdown(r);
    case 'curl':
      return writeCurl(r);
    case 'k2vv':
      return writeK2vv(r);
    case 'promptfoo':
      return writePromptfoo(r);
  }
}

/** Ids of every exchange in the session of `id` (an id or unique prefix), oldest first: a session HAR's content. */
export function sessionCaptureIds(reader: CaptureReader, id: string): string[] {
  const sessionId = findCapture(reader, id).sessionId;
  return reader
    .list()
    .filter((x) => x.sessionId === sessionId)
    .sort((a, b) => a.startedAt - b.startedAt)
    .map((x) => x.id);
}

/** One call from store to text: read the captures, redact and analyse them, export. */
export function exportCaptures(
  reader: CaptureReader,
  ids: string[],
  format: ExportFormat,
  opts: ReproOptions = {},
): { text: string; repros: Repro[] } {
  const repros = ids.map((id) => prepareRepro(readCapture(reader, id), opts));
  return { text: exportText(repros, format), repros };
}

/**
 * Writes the export next to its final name and renames it into place, so a failed write (full disk) never leaves
 * a half-written file behind. Returns the text written.
 */
export function exportToFile(repros: Repro[], format: ExportFormat, path: string): string {
  const text = exportText(repros, format);
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (e) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // nothing was written (the folder is missing or a file): nothing to remove
    }
    throw new UserError(`cannot write ${path}: ${writeError(e as NodeJS.ErrnoException, path)}`);
  }
  return text;
}

/** Why a write failed, in words about the user's path (Node's message names the temporary file). */
function writeError(err: NodeJS.ErrnoException, path: string): string {
  if (err.code === 'ENOENT') return `the folder ${dirname(resolve(path))} does not exist`;
  if (err.code === 'EISDIR') return 'it is a directory; give a file name';
  return fsWhy(err);
}
