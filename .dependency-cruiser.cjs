/**
 * Import layering, checked by `npm run lint:deps` (part of `npm test`). The picture and the why
 * are in docs/ARCHITECTURE.md. Dependencies run one way, downwards:
 *
 *   entries → cli → surfaces → facade → features → adapters → contracts (LAYERS below)
 *
 * plus: no cycles anywhere; only the wiring names a store backend; nothing in src/ imports the
 * benchmarks; the benchmarks import cairn only through `cairn-memory` and `cairn-memory/testing`.
 */
/** The layers, top to bottom: a module may import its own layer (without cycles) and those below. */
const LAYERS = [
  { name: 'entries', path: '^src/(index|testing)[.]ts$' },
  { name: 'cli', path: '^src/cli/' },
  { name: 'surfaces', path: ['^src/(mcp|hooks|web|serve|install|doctor|memorytool)/', '^src/config[.]ts$'] },
  { name: 'facade', path: '^src/cairn[.]ts$' },
  { name: 'features (composite)', path: '^src/(history|distill|context)/' },
  { name: 'features (retrieval, capture)', path: '^src/(recall|ingest)/' },
  { name: 'features (memory model)', path: '^src/memory/' },
  { name: 'features (base)', path: '^src/(privacy|workspace|ledger)/' },
  { name: 'adapters', path: '^src/(store|embed|auth)/' },
  { name: 'contracts', path: '^src/(types|errors|deps|runtime|paths|tokens|bench-report)[.]ts$' },
];
const paths = (layers) => layers.flatMap((l) => (Array.isArray(l.path) ? l.path : [l.path]));

/** One rule per layer: nothing in it imports a layer above it. */
const downwards = LAYERS.slice(1).map((layer, i) => ({
  name: `${layer.name.replace(/\W+/g, '-').replace(/-$/, '')}-import-nothing-above`,
  comment: `${layer.name} may import only ${LAYERS.slice(i + 2).length > 0 ? 'its own layer and the layers below it' : 'its own layer'} (docs/ARCHITECTURE.md).`,
  severity: 'error',
  from: { path: layer.path },
  to: { path: paths(LAYERS.slice(0, i + 1)) },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'An import cycle ties modules into one: break it by moving the shared part down a layer. A cycle closed only by ' +
        'a type import (a module naming the type of the helpers it is handed) loads nothing at run time and is allowed.',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    ...downwards,
    {
      name: 'every-module-has-a-layer',
      comment: 'A new top-level module or folder goes into LAYERS (and the picture in docs/ARCHITECTURE.md) before others import it.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^src/', pathNot: paths(LAYERS) },
    },
    {
      name: 'only-the-wiring-names-a-store-backend',
      comment: 'Shared code asks the Store contract for capabilities; naming SQLite or PostgreSQL is for the stores themselves and the wiring (config, entries, the CLI commands that migrate/copy, doctor).',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/store/', '^src/config[.]ts$', '^src/(index|testing)[.]ts$', '^src/cli/', '^src/doctor/'] },
      to: { path: '^src/store/(sqlite|postgres)/' },
    },
    {
      name: 'store-dialects-are-independent',
      comment: 'What SQLite and PostgreSQL share lives in src/store/ (memory-rows, review-rows, substrate-rows, embedding-rows …), never in one dialect for the other to import; only `cairn copy` (postgres/copy*) knows both.',
      severity: 'error',
      from: { path: '^src/store/(sqlite|postgres)/', pathNot: '^src/store/postgres/copy' },
      to: { path: '^src/store/(sqlite|postgres)/', pathNot: '^src/store/$1/' },
    },
    {
      name: 'the-product-imports-no-benchmarks',
      comment: 'Benchmarks are the bench/ workspace; the published package carries none (cairn bench loads them at run time).',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^bench/' },
    },
    {
      name: 'benchmarks-use-the-public-entries',
      comment: 'bench/ depends on cairn only through cairn-memory (src/index.ts) and cairn-memory/testing (src/testing.ts).',
      severity: 'error',
      from: { path: '^bench/' },
      to: { path: '^src/', pathNot: '^src/(index|testing)[.]ts$' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules)/' },
    tsPreCompilationDeps: true,
    // The root tsconfig maps cairn-memory(/testing) to src/, so bench's imports resolve to the entries.
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'node', 'default'], extensions: ['.ts', '.js'] },
  },
};
