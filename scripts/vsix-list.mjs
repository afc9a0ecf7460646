// The entries of a VSIX (a zip file), read from its central directory: no unzip needed, on any platform.
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';

/** Every entry of the zip file `file`: its name and uncompressed size. Throws on a file that is not a zip. */
export function vsixEntries(file) {
  return centralDirectory(readFileSync(file), file).map(({ name, size }) => ({ name, size }));
}

/** The contents of one entry of the zip file `file` (stored or deflated), or undefined when it has none by that name. */
export function vsixRead(file, name) {
  const buf = readFileSync(file);
  const e = centralDirectory(buf, file).find((x) => x.name === name);
  if (!e) return undefined;
  const start = e.local + 30 + buf.readUInt16LE(e.local + 26) + buf.readUInt16LE(e.local + 28);
  const data = buf.subarray(start, start + e.compressed);
  if (e.method === 0) return Buffer.from(data);
  if (e.method === 8) return inflateRawSync(data);
  throw new Error(`${file}: ${name} uses compression method ${e.method}`);
}

function centralDirectory(buf, file) {
  // The end-of-central-directory record: 22 bytes plus a comment of at most 65,535.
  let end = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 22 - 0xffff); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      end = i;
      break;
    }
  }
  if (end < 0) throw new Error(`${file} is not a zip file`);
  const count = buf.readUInt16LE(end + 10);
  let at = buf.readUInt32LE(end + 16);
  const entries = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) throw new Error(`${file}: broken central directory at entry ${n}`);
    const method = buf.readUInt16LE(at + 10);
    const compressed = buf.readUInt32LE(at + 20);
    const size = buf.readUInt32LE(at + 24);
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    entries.push({ name: buf.toString('utf8', at + 46, at + 46 + nameLength), size, compressed, method, local });
    at += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}
