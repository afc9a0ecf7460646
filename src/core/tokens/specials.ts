/**
 * One regex that finds any of a set of literal strings (special-token names), longest first at each position.
 * Built as a trie: a flat alternation of 256 names (Kimi) or 800 (DeepSeek) makes the regex engine try every
 * name at every `<` of a code-heavy text, which costs more than the encoding itself.
 */
export function literalAlternation(names: Iterable<string>): RegExp | undefined {
  interface Node {
    next: Map<string, Node>;
    end: boolean;
  }
  const root: Node = { next: new Map(), end: false };
  let any = false;
  for (const name of names) {
    if (!name) continue;
    any = true;
    let node = root;
    for (const ch of name) {
      let child = node.next.get(ch);
      if (!child) node.next.set(ch, (child = { next: new Map(), end: false }));
      node = child;
    }
    node.end = true;
  }
  if (!any) return undefined;
  const source = (node: Node): string => {
    const branches = [...node.next].map(([ch, child]) => escapeChar(ch) + source(child));
    if (branches.length === 0) return '';
    // Longer names first; the empty branch (a name ends here) last, so the longest name wins.
    if (node.end) branches.push('');
    return branches.length === 1 ? branches[0] : `(?:${branches.join('|')})`;
  };
  return new RegExp(source(root), 'gu');
}

function escapeChar(ch: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(ch) ? `\\${ch}` : ch;
}
