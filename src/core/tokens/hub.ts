import { createWriteStream, mkdirSync, renameSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { threadId } from 'node:worker_threads';
import { UserError } from '../model';

/** Downloads single files from the Hugging Face Hub (`{endpoint}/{repo}/resolve/{revision}/{file}`). */

export const DEFAULT_HUB_ENDPOINT = 'https://huggingface.co';

export interface DownloadProgress {
  repo: string;
  file: string;
  received: number;
  /** From Content-Length, when the server sends it. */
  total?: number;
}

export interface HubOptions {
  /** Defaults to env HF_ENDPOINT, then https://huggingface.co. */
  endpoint?: string;
  /** Access token for gated repos. Defaults to env HF_TOKEN. Sent to the endpoint only, never logged. */
  token?: string;
  revision?: string;
  onProgress?: (p: DownloadProgress) => void;
  signal?: AbortSignal;
}

export function hubEndpoint(o: HubOptions = {}): string {
  return (o.endpoint || process.env.HF_ENDPOINT || DEFAULT_HUB_ENDPOINT).replace(/\/+$/, '');
}

/**
 * Downloads `repo`/`file` to `dest` (atomically: a temporary file renamed into place once complete).
 * Returns false when the Hub says the file does not exist (404), so callers can try another layout.
 * Every other failure is a UserError with one line that says what to do.
 */
export async function downloadHubFile(repo: string, file: string, dest: string, o: HubOptions = {}): Promise<boolean> {
  const endpoint = hubEndpoint(o);
  const url = `${endpoint}/${repo.split('/').map(encodeURIComponent).join('/')}/resolve/${encodeURIComponent(o.revision ?? 'main')}/${file}`;
  const token = o.token ?? process.env.HF_TOKEN;
  // Loaded on the first download only: evaluating undici costs a token worker's start about as much as the rest of
  // its code, and a tokenizer already in the data dir needs no download.
  const { fetch } = await import('undici');
  let res;
  try {
    res = await fetch(url, {
      headers: { 'user-agent': 'tokenscope', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: o.signal,
    });
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e as Error).message;
    throw new UserError(
      `cannot reach the Hugging Face Hub at ${endpoint} (${why}) to fetch ${repo}/${file}; ` +
        'pass --tokenizer-dir with a folder holding the tokenizer files, or set HF_ENDPOINT to a reachable mirror',
    );
  }
  if (res.status === 404) {
    await res.body?.cancel();
    return false;
  }
  if (res.status === 401 || res.status === 403) {
    await res.body?.cancel();
    throw new UserError(
      `the Hugging Face Hub refused ${repo}/${file} (HTTP ${res.status}): the repository is gated or private; ` +
        (token ? 'the token given has no access to it' : 'set HF_TOKEN to a token that can read it'),
    );
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel();
    throw new UserError(`the Hugging Face Hub answered HTTP ${res.status} for ${repo}/${file}`);
  }
  // With a content-encoding, Content-Length counts compressed bytes while the body arrives decoded.
  const total = res.headers.get('content-encoding') ? undefined : Number(res.headers.get('content-length')) || undefined;
  let received = 0;
  const counted = Readable.fromWeb(res.body as import('node:stream/web').ReadableStream<Uint8Array>);
  counted.on('data', (chunk: Buffer) => {
    received += chunk.length;
    o.onProgress?.({ repo, file, received, total });
  });
  // Private like the rest of the data dir (folders 0700, files 0600).
  mkdirSync(dirname(dest), { recursive: true, mode: 0o700 });
  // Worker threads of one process may fetch the same file at once (tokens --batch): the thread id keeps their parts apart.
  const tmp = `${dest}.${process.pid}.${threadId}.${Date.now().toString(36)}.part`;
  try {
    await pipeline(counted, createWriteStream(tmp, { mode: 0o600 }));
    if (total !== undefined && received !== total) {
      throw new Error(`got ${received} of ${total} bytes`);
    }
    renameSync(tmp, dest);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {
      // the partial file may not exist
    }
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message;
    throw new UserError(`download of ${repo}/${file} failed: ${why}`);
  }
  return true;
}
