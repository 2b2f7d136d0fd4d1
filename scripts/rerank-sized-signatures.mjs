#!/usr/bin/env node
/**
 * For latency measurements only (issue #18, recall p50 @100K with the default rerank): give every
 * memory of a store that has a vector but no token signature a signature of the size the real one
 * would have — the memory text's MiniLM word pieces, at most 64 — with seeded pseudo-random sign
 * bits, in minutes instead of the ~100K model runs a real signing takes on a loaded machine. The
 * rerank reads and scores such a signature exactly as a real one (its cost depends on the piece
 * count, not on the bits); its ORDER is meaningless, so never measure quality on such a store.
 * Prints the count and the mean bytes.
 *
 *   npm run build && node scripts/rerank-sized-signatures.mjs --db <bench-cache>/corpus-…-onnx_all_minilm_l6_v2_q.db
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openSqliteStore } from '../dist/index.js';
import { onnxModelFolder } from '../dist/embed/onnx.js';
import { encodeSignature, SIGNATURE_MAX_PIECES } from '../dist/embed/token-signature.js';

const { values: args } = parseArgs({ options: { db: { type: 'string' } } });
if (!args.db) throw new Error('--db <store file> is required');
const tokenizers = await import('@huggingface/tokenizers');
const tokenizer = new tokenizers.Tokenizer(JSON.parse(readFileSync(join(onnxModelFolder('all-minilm-l6-v2-q'), 'tokenizer.json'), 'utf8')), {});
const store = await openSqliteStore(args.db);
const model = await store.vectorModel();
if (!model) throw new Error(`${args.db} has no vectors`);
let seed = 0x18;
const random = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
let count = 0;
let bytes = 0;
for (;;) {
  const batch = await store.missingSignatures(model, 2000);
  if (batch.length === 0) break;
  const items = batch.map((memory) => {
    const pieces = Math.min(SIGNATURE_MAX_PIECES, Math.max(0, Math.min(tokenizer.encode(memory.text, { add_special_tokens: true }).ids.length, 256) - 2));
    const signature = encodeSignature(Array.from({ length: pieces }, () => Float32Array.from({ length: model.dimension }, random)), model.dimension);
    bytes += signature.length;
    return { id: memory.id, signature };
  });
  await store.putSignatures(model, items);
  count += items.length;
  if (count % 20000 < 2000) process.stderr.write(`${count} signed\n`);
}
console.log(`${count} memories given sized signatures, ${count ? (bytes / count).toFixed(0) : 0} bytes a signature on average`);
await store.close();
