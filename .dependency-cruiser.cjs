/**
 * The layering of src/ (docs/architecture.md draws it), checked by `npm run lint`.
 *
 * Data flows one way: bytes → wire events → exchange → family parse → findings / tokens → views and exports. Each
 * layer below may import from its own layer and the ones before it, never from one after it. Type-only imports
 * count as well: a lower layer that needs a higher layer's type is a sign the type lives in the wrong place.
 */

/** The layers of src/core, lowest first, then the two programs on top. Paths are regular expressions. */
const LAYERS = [
  // The list of family ids (families/ids.ts) imports nothing and is part of the data model (model.ts re-exports it).
  { name: 'base', paths: ['^src/core/(model|redact|fs-errors|version|cost)[.]ts$', '^src/core/families/ids[.]ts$'] },
  { name: 'wire', paths: ['^src/core/wire/'] },
  { name: 'families', paths: ['^src/core/families/'] },
  { name: 'checks', paths: ['^src/core/checks/', '^src/core/parsed[.]ts$'] },
  { name: 'analyze', paths: ['^src/core/analyze[.]ts$'] },
  { name: 'capture-tokens', paths: ['^src/core/(capture|tokens|live)/'] },
  { name: 'proxy-upstream-repair', paths: ['^src/core/(proxy|upstream|repair)/'] },
  { name: 'features', paths: ['^src/core/(export|watch|providers|policy|demo|agents)/'] },
  { name: 'programs', paths: ['^src/(cli|extension)/'] },
];

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}`,
  severity: 'error',
  comment: `The ${layer.name} layer imports only from itself and the layers below it (${LAYERS.slice(0, i).map((l) => l.name).join(', ') || 'none'}).`,
  from: { path: layer.paths },
  // A file a lower layer names explicitly (families/ids.ts) belongs to that layer, not to its folder's.
  to: { path: LAYERS.slice(i + 1).flatMap((l) => l.paths), pathNot: LAYERS.slice(0, i + 1).flatMap((l) => l.paths) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'core-in-a-layer',
      severity: 'error',
      comment: 'Every file of src/core belongs to a layer: add a new folder or top-level file to LAYERS (and to docs/architecture.md).',
      from: { path: '^src/core/', pathNot: LAYERS.flatMap((l) => l.paths) },
      to: {},
    },
    {
      name: 'core-in-a-layer',
      severity: 'error',
      comment: 'Every file of src/core belongs to a layer: add a new folder or top-level file to LAYERS (and to docs/architecture.md).',
      from: {},
      to: { path: '^src/core/', pathNot: LAYERS.flatMap((l) => l.paths) },
    },
    {
      name: 'core-no-vscode',
      severity: 'error',
      comment: 'src/core runs in plain Node (the CLI, the tests): no vscode import.',
      from: { path: '^src/core/' },
      to: { path: '^vscode$' },
    },
    {
      name: 'core-no-programs',
      severity: 'error',
      comment: 'src/core never imports the extension, the CLI or the webview.',
      from: { path: '^src/core/' },
      to: { path: ['^src/(extension|cli)/', '^webview/'] },
    },
    {
      name: 'cli-not-extension',
      severity: 'error',
      comment: 'The CLI and the extension are two programs over the same core: neither imports the other.',
      from: { path: '^src/cli/' },
      to: { path: ['^src/extension/', '^vscode$', '^webview/'] },
    },
    {
      name: 'extension-not-cli',
      severity: 'error',
      comment: 'The CLI and the extension are two programs over the same core: neither imports the other.',
      from: { path: '^src/extension/' },
      to: { path: '^src/cli/' },
    },
    {
      name: 'extension-webview-protocol-only',
      severity: 'error',
      comment: 'The extension talks to the webviews through their typed message protocols only (webview/…protocol.ts, webview/…Protocol.ts).',
      from: { path: '^src/extension/' },
      to: { path: '^webview/', pathNot: ['^webview/[a-zA-Z]*[Pp]rotocol[.]ts$', '^webview/[a-z-]+/[a-zA-Z]*[Pp]rotocol[.]ts$'] },
    },
    {
      name: 'webview-separate',
      severity: 'error',
      comment: 'The webview runs in the browser: it imports nothing from the extension or the CLI, and only types from src/core.',
      from: { path: '^webview/' },
      to: { path: ['^src/(extension|cli)/', '^vscode$'] },
    },
    {
      name: 'webview-core-types-only',
      severity: 'error',
      comment: 'The webview runs in the browser: it imports only types from src/core.',
      from: { path: '^webview/' },
      to: { path: '^src/core/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A runtime import cycle (module initialisation order decides what is undefined). Type-only imports are erased and do not count.',
      from: {},
      to: { circular: true, dependencyTypesNot: ['type-only'], viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-orphans',
      severity: 'error',
      comment: 'A module nothing imports and that imports nothing: remove it, or use it.',
      from: { orphan: true, pathNot: ['[.]d[.]ts$'] },
      to: {},
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to no file or installed package.',
      from: {},
      to: { couldNotResolve: true, pathNot: '^vscode$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '^dist/'] },
    tsConfig: { fileName: 'tsconfig.json' },
    // Type-only imports are part of the graph (the layer rules count them; the cycle rule leaves them out).
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    cache: false,
  },
};
