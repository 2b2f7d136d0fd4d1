/**
 * `path:line` findings the agent wrote down: the sentence (or list item) of an assistant reply
 * that points at a file and line and says something about it ("the race is in
 * src/ws/resolver.rs:214 — acquire_lock runs after the read").
 */
import { extractFileRefs } from '../../workspace/files.js';
import type { SessionView } from '../session.js';
import { oneLine, sentences, stripMarkdown, words } from '../text.js';
import type { Candidate } from '../types.js';
import { candidate } from './common.js';

/** Findings kept per reply (a long review is not a list of memories). */
const MAX_PER_TURN = 6;
/** Words a finding needs besides the reference itself. */
const MIN_WORDS = 4;

/** Sentences about what the agent is about to do, not what it found. */
const INTENT = /^(?:let me|let's|i'll|i will|i'm going to|now (?:let me|i'll|i will)|next,? (?:i|let)|first,? (?:let me|i'll)|checking|looking at|reading|opening)\b/i;

export function extractLocations(view: SessionView): Candidate[] {
  const out: Candidate[] = [];
  for (const turn of view.turns) {
    if (!view.isNew(turn) || !view.isAgentText(turn)) continue;
    let kept = 0;
    const seen = new Set<string>();
    for (const sentence of sentences(turn.text)) {
      if (kept >= MAX_PER_TURN) break;
      const refs = extractFileRefs(sentence).filter((r) => r.line !== undefined);
      if (refs.length === 0) continue;
      const clean = stripMarkdown(sentence);
      if (INTENT.test(clean)) continue;
      // Words besides the references: a bare `src/a.ts:12` heading says nothing.
      let rest = clean;
      for (const ref of refs) rest = rest.replace(ref.path, ' ');
      if (words(rest.replace(/\d+/g, ' ')).length < MIN_WORDS) continue;
      const files = refs.map((r) => `${view.relative(r.path)}:${r.line}`);
      const key = files.join(' ');
      if (seen.has(key)) continue;
      seen.add(key);
      let text = oneLine(clean, 320);
      for (const ref of refs) {
        const rel = view.relative(ref.path);
        if (rel !== ref.path) text = text.replace(ref.path, rel);
      }
      kept++;
      out.push(
        candidate(view, turn, {
          text,
          kind: 'fact',
          extractor: 'location',
          importance: 0.6,
          tags: ['location'],
          files,
        }),
      );
    }
  }
  return out;
}
