/**
 * cairn's benchmarks, loaded by `cairn bench` when this workspace is present (a clone of the
 * repository, built). Everything here depends on cairn only through `cairn-memory` (the public
 * API) and `cairn-memory/testing` (the documented test-support entry).
 */
export { runBench, DEFAULT_SIZES, QUICK_SIZES } from './run.js';
export type { BenchRunOptions } from './run.js';
export { SUITES, NOT_IMPLEMENTED, selectSuites } from './registry.js';
export { formatReport, renderDocs, writeDocs } from './report.js';
export type { BenchContext, BenchReport, Suite, SuiteOutcome, SuiteResult } from './types.js';
