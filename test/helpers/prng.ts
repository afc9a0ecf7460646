/** mulberry32: a tiny seeded PRNG, so a failing fuzz or randomized case names its seed and reproduces. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Cuts `bytes` at random places (1 to `maxCuts` cuts; cuts may be adjacent, giving empty chunks). */
export function randomSplit(bytes: Uint8Array, rand: () => number, maxCuts = 12): Uint8Array[] {
  const cuts = Array.from({ length: 1 + Math.floor(rand() * maxCuts) }, () => Math.floor(rand() * (bytes.length + 1))).sort(
    (a, b) => a - b,
  );
  const parts: Uint8Array[] = [];
  let prev = 0;
  for (const c of cuts) {
    parts.push(bytes.subarray(prev, c));
    prev = c;
  }
  parts.push(bytes.subarray(prev));
  return parts;
}
