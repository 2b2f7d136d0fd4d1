/**
 * The suites `cairn bench` knows, in SPEC §9 order. To add one: write bench/src/suites/<name>.ts
 * exporting a `Suite`, and replace its `planned('<name>')` line below.
 */
import { invalid } from 'cairn-memory/testing';
import { suiteSpec } from './spec.js';
import { beirSuite } from './suites/beir.js';
import { contextSuite } from './suites/context.js';
import { embedSuite } from './suites/embed.js';
import { fidelitySuite } from './suites/fidelity.js';
import { fidelityExternalSuite } from './suites/fidelity-external.js';
import { hooksSuite } from './suites/hooks.js';
import { ingestSuite } from './suites/ingest.js';
import { locomoSuite } from './suites/locomo.js';
import { peersSuite } from './suites/peers.js';
import { recallSuite } from './suites/recall.js';
import { vectorsSuite } from './suites/vectors.js';
import { rssSuite } from './suites/rss.js';
import { tokensSuite } from './suites/tokens.js';
import { writeSuite } from './suites/write.js';
import type { Suite } from './types.js';

export const NOT_IMPLEMENTED = 'not yet implemented';

function planned(name: string): Suite {
  return {
    name,
    description: suiteSpec(name)?.measures ?? name,
    planned: true,
    run: async () => ({ status: 'skipped', reason: NOT_IMPLEMENTED }),
  };
}

export const SUITES: readonly Suite[] = [
  recallSuite,
  vectorsSuite,
  contextSuite,
  writeSuite,
  ingestSuite,
  hooksSuite,
  tokensSuite,
  rssSuite,
  locomoSuite,
  beirSuite,
  fidelitySuite,
  fidelityExternalSuite,
  embedSuite,
  peersSuite,
];

/** The suites `name` selects (`all`, or one suite); an unknown name is a one-line user error. */
export function selectSuites(name: string, suites: readonly Suite[] = SUITES): Suite[] {
  if (name === 'all') return [...suites];
  const suite = suites.find((s) => s.name === name);
  if (suite) return [suite];
  const ready = suites.filter((s) => !s.planned).map((s) => s.name);
  const later = suites.filter((s) => s.planned).map((s) => s.name);
  throw invalid(
    `unknown suite "${name}"; choose all, ${ready.join(', ')}${later.length > 0 ? ` (${NOT_IMPLEMENTED}: ${later.join(', ')})` : ''}`,
    'suite',
  );
}
