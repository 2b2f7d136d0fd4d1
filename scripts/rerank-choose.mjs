#!/usr/bin/env node
/**
 * Pick one token-rerank setting for all three sets from their tuning halves (issue #18), by the
 * rule the fusion weights were chosen with (docs/EMBEDDINGS.md): the largest mean relative gain
 * over the product's own order across the three tuning halves, with no tuning half losing. Reads
 * the `--out` files of `scripts/rerank-maxsim.mjs`; the candidate text "memory text" is LoCoMo's
 * turn without its context and the BEIR document (which has none).
 *
 *   node scripts/rerank-choose.mjs /tmp/rerank/maxsim-locomo.json /tmp/rerank/maxsim-scifact.json /tmp/rerank/maxsim-cosqa.json
 */
import { readFileSync } from 'node:fs';

const [locomoFile, scifactFile, cosqaFile] = process.argv.slice(2);
const sets = { locomo: locomoFile, scifact: scifactFile, cosqa: cosqaFile };
const rows = Object.fromEntries(Object.entries(sets).map(([name, file]) => [name, JSON.parse(readFileSync(file, 'utf8'))]));
const product = Object.fromEntries(Object.entries(rows).map(([name, r]) => [name, r.find((x) => x.point.kind === 'product')]));
/** LoCoMo's text variant → the BEIR one (BEIR documents have no context: the text is the memory's). */
const beirText = { turn: 'context', 'turn content': 'context content', context: 'context', 'context content': 'context content' };
const find = (name, p, text) => rows[name].find((x) => x.point.kind === 'maxsim' && x.point.n === p.n && x.point.k === p.k && x.point.w === p.w && x.point.text === text);

const candidates = [];
for (const r of rows.locomo.filter((x) => x.point.kind === 'maxsim')) {
  const p = r.point;
  const got = { locomo: r, scifact: find('scifact', p, beirText[p.text]), cosqa: find('cosqa', p, beirText[p.text]) };
  if (!got.scifact || !got.cosqa) continue;
  const gains = Object.fromEntries(Object.entries(got).map(([name, x]) => [name, x.tuning / product[name].tuning - 1]));
  candidates.push({ p, got, gains, mean: (gains.locomo + gains.scifact + gains.cosqa) / 3, ok: Object.values(gains).every((g) => g >= 0) });
}
candidates.sort((a, b) => Number(b.ok) - Number(a.ok) || b.mean - a.mean);
const f = (x) => `${x.tuning.toFixed(3)} / ${x.report.toFixed(3)} / ${x.all.toFixed(3)}`;
console.log(`product (tuning / report / all): LoCoMo ${f(product.locomo)}, SciFact ${f(product.scifact)}, CoSQA ${f(product.cosqa)}`);
for (const c of candidates.slice(0, 10)) {
  console.log(`${c.ok ? 'passes' : 'loses '} n ${c.p.n} k ${c.p.k} w ${c.p.w} ${c.p.text}: mean tuning gain ${(100 * c.mean).toFixed(2)}% (${Object.values(c.gains).map((g) => `${(100 * g).toFixed(2)}%`).join(', ')}); LoCoMo ${f(c.got.locomo)}, SciFact ${f(c.got.scifact)}, CoSQA ${f(c.got.cosqa)}`);
}
