// Parity with public parser conformance suites (test/fixtures/conformance/*.json, source and commit in each file):
// on a healthy case the analysis is silent and the calls equal the suite's reference; a truncated or unbalanced case
// (group 5) is flagged with at least one error. The family comes from the markers alone, as for a pasted output.
// A case whose classification departs from its group says why in the fixture (`why_flagged`, `why_healthy`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { analyze } from '../../../src/core/analyze';

const DIR = join(import.meta.dirname, '../../fixtures/conformance');

/** The suite's family → the families whose parse is the same grammar (detection may pick either). */
const FAMILIES: Record<string, string[]> = {
  mistral: ['mistral'],
  jamba: ['jamba'],
  nemotron_deci: ['nemotron'],
  phi4: ['phi4'],
  hermes: ['qwen3', 'hermes'],
  qwen25: ['qwen3', 'hermes'],
  llama3_json: ['llama3-json'],
  pythonic: ['llama4-pythonic'],
  gemma4: ['gemma4'],
  glm47: ['glm47', 'glm45'],
  deepseek_v3_2: ['deepseek-v32'],
  deepseek_v4: ['deepseek-v4'],
  nemotron_nano: ['qwen3-coder'],
  qwen3_coder: ['qwen3-coder'],
  kimi_k3: ['kimi-k3'],
  kimi_k2: ['kimi-k2'],
  deepseek_v3: ['deepseek-v3', 'deepseek-v31'],
  deepseek_v3_1: ['deepseek-v31', 'deepseek-v3'],
  minimax_m2: ['minimax-m2'],
  harmony: ['gpt-oss'],
  minimax_m3: ['minimax-m3'],
};

interface Case {
  id: string;
  description: string;
  model_text: string;
  broken: boolean;
  calls?: { name: string; arguments: unknown }[];
}

const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));

for (const file of files) {
  const doc = JSON.parse(readFileSync(join(DIR, file), 'utf8')) as { source: string; commit: string; family: string; cases: Case[] };
  const expected = FAMILIES[doc.family];
  test(`conformance ${doc.family}: healthy cases silent with the reference calls, broken ones flagged`, () => {
    assert.ok(expected, `no family mapping for ${doc.family}`);
    assert.ok(doc.source && /^[0-9a-f]{40}$/.test(doc.commit), `${file}: source and commit are named`);
    const failures: string[] = [];
    for (const c of doc.cases) {
      const where = `${c.id} (${c.description}) ${JSON.stringify(c.model_text.slice(0, 160))}`;
      const a = analyze({ nativeText: c.model_text });
      const got = a.findings.map((f) => `${f.severity} ${f.rule}`);
      if (c.broken) {
        if (!a.findings.some((f) => f.severity === 'error'))
          failures.push(`${where}: not flagged [${got.join(', ')}] (family ${a.family})`);
        continue;
      }
      if (a.findings.length) failures.push(`${where}: false alarm [${a.findings.map((f) => `${f.rule}: ${f.message}`).join(' | ')}]`);
      if (c.calls!.length && !(a.family && expected.includes(a.family as string))) failures.push(`${where}: family ${a.family}`);
      const calls = a.message.toolCalls.map((t) => {
        try {
          return { name: t.name, arguments: JSON.parse(t.arguments) as unknown };
        } catch {
          return { name: t.name, arguments: t.arguments };
        }
      });
      if (JSON.stringify(calls) !== JSON.stringify(c.calls))
        failures.push(`${where}: calls ${JSON.stringify(calls)} ≠ ${JSON.stringify(c.calls)}`);
    }
    assert.deepEqual(failures, [], `${doc.family}:\n${failures.join('\n')}`);
  });
}
