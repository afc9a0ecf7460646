// `tokenscope lint --families`: which Tokenscope family reads each tool-call parser the engines register.
import {
  ENGINE_PARSERS,
  PARSER_ENGINE_NAMES,
  PARSER_ENGINES,
  PARSER_SOURCES,
  UNNAMED_FAMILIES,
  type ParserEngine,
} from '../core/families/engine-parsers';
import { families } from '../core/families/index';
import { UserError, type FamilyId } from '../core/model';

export interface FamiliesMapParser {
  name: string;
  file: string;
  family?: FamilyId;
  familyName?: string;
  also?: FamilyId[];
  unsupported?: string;
  note?: string;
}

export interface FamiliesMap {
  engines: {
    engine: ParserEngine;
    name: string;
    repo: string;
    lists: { path: string; commit: string }[];
    notes: string[];
    parsers: FamiliesMapParser[];
    mapped: number;
    unsupported: number;
  }[];
  /** Registered families no engine parser names, with why. */
  unnamedFamilies: { family: FamilyId; familyName: string; note: string }[];
}

const displayName = (id: FamilyId): string => families.find((f) => f.id === id)?.format.displayName ?? id;

/** The map as data (the `--json` shape). */
export function familiesMap(): FamiliesMap {
  const engines = PARSER_ENGINES.map((engine) => {
    const parsers: FamiliesMapParser[] = ENGINE_PARSERS.filter((p) => p.engine === engine).map((p) => ({
      name: p.name,
      file: p.file,
      ...(p.family && { family: p.family, familyName: displayName(p.family) }),
      ...(p.also && { also: [...p.also] }),
      ...(p.unsupported && { unsupported: p.unsupported }),
      ...(p.note && { note: p.note }),
    }));
    const { repo, lists, notes = [] } = PARSER_SOURCES[engine];
    return {
      engine,
      name: PARSER_ENGINE_NAMES[engine],
      repo,
      lists: lists.map((l) => ({ ...l })),
      notes: [...notes],
      parsers,
      mapped: parsers.filter((p) => p.family).length,
      unsupported: parsers.filter((p) => p.unsupported).length,
    };
  });
  const unnamedFamilies = (Object.entries(UNNAMED_FAMILIES) as [FamilyId, string][]).map(([family, note]) => ({
    family,
    familyName: displayName(family),
    note,
  }));
  return { engines, unnamedFamilies };
}

/** The map as text: per engine, each parser name → family display name, or `unsupported: reason`. */
export function formatFamiliesMap(map: FamiliesMap = familiesMap()): string {
  const lines: string[] = [];
  for (const e of map.engines) {
    lines.push(`${e.name} (${e.repo}): ${e.parsers.length} parsers, ${e.mapped} mapped, ${e.unsupported} unsupported`);
    for (const l of e.lists) lines.push(`  from ${l.path} @ ${l.commit}`);
    for (const n of e.notes) lines.push(`  and ${n}`);
    const width = Math.min(28, Math.max(...e.parsers.map((p) => p.name.length)));
    for (const p of e.parsers) {
      const to = p.familyName
        ? `${p.familyName}${p.also?.length ? ` (also ${p.also.map(displayName).join(', ')})` : ''}`
        : `unsupported: ${p.unsupported}`;
      lines.push(`  ${p.name.padEnd(width)} → ${to}`);
    }
    lines.push('');
  }
  if (map.unnamedFamilies.length > 0) {
    lines.push('Families no engine parser names:');
    for (const f of map.unnamedFamilies) lines.push(`  ${f.familyName}: ${f.note}`);
  }
  return lines.join('\n').trimEnd();
}

/** What `lint --families` prints: the text map, or the JSON map with `json`. It takes no FILE. */
export function familiesMapOutput(opts: { json: boolean; positional: readonly string[] }): string {
  if (opts.positional.length > 0) throw new UserError('--families prints the engine parser map and takes no FILE');
  return opts.json ? JSON.stringify(familiesMap(), null, 2) : formatFamiliesMap();
}
