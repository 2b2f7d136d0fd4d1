import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultEmbedSpecs, timingTexts } from '../../bench/src/suites/embed.js';
import { KNOWN_ONNX_MODELS } from '../../src/embed/onnx-models.js';
import { tempDir } from '../helpers/cli.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

describe('bench embed: what it times', () => {
  it('measures every known ONNX model by default', () => {
    expect(defaultEmbedSpecs()).toEqual(Object.keys(KNOWN_ONNX_MODELS).map((name) => `onnx:${name}`));
    expect(defaultEmbedSpecs()).toContain('onnx:all-minilm-l6-v2-q');
  });

  it('times LoCoMo questions and turns, spread over every conversation, and built-in texts without the data', () => {
    const data = tempDir('cairn-bench-embed-');
    dirs.push(data);
    expect(timingTexts(data, false).source).toMatch(/built-in/);
    mkdirSync(join(data, 'locomo'));
    const sample = (n: number) => ({
      qa: Array.from({ length: 50 }, (_, i) => ({ question: `question ${n}.${i}` })),
      conversation: { speaker_a: 'A', session_1: Array.from({ length: 300 }, (_, i) => ({ speaker: 'A', text: `turn ${n}.${i}` })) },
    });
    writeFileSync(join(data, 'locomo', 'locomo-dev.json'), JSON.stringify([sample(0), sample(1)]));
    const full = timingTexts(data, false);
    expect(full.queries).toHaveLength(60);
    expect(full.docs).toHaveLength(400);
    expect(new Set(full.docs).size).toBe(400);
    expect(full.docs[0]).toBe('A: turn 0.0');
    expect(full.docs.some((d) => d.startsWith('A: turn 1.'))).toBe(true);
    expect(full.queries.some((q) => q.startsWith('question 1.'))).toBe(true);
    expect(timingTexts(data, true).docs).toHaveLength(48);
  });
});
