/**
 * Behavioural invariants the agent found and stated ("acquire_lock() must be called before
 * touching workspace metadata", "Invariant: …", "X is never null after init"): the detail seed
 * 000 names as the most expensive to lose in a summary. A sentence counts when it states a
 * must / never / always / only-when rule about something it names exactly.
 */
import type { SessionView } from '../session.js';
import { hasSpecific, oneLine, sentences, stripMarkdown } from '../text.js';
import type { Candidate } from '../types.js';
import { candidate } from './common.js';

const CUE =
  /\b(?:must(?: not| never| always| be| only)?|mustn't|must be called|has to be|needs to be (?:called|held|set|run)|is required (?:before|for|to)|requires (?:that|a|the)|(?:is|are) never|(?:is|are) always|never (?:be|call|mutate|modify|touch|use|returns?)|always (?:be|call|run|hold|returns?)|can never|only (?:after|before|once)|guaranteed to|not thread-safe|not safe to|before (?:calling|touching|using))\b/i;
const LABEL = /^(?:invariant|important|caution|warning|gotcha|constraint|rule|note)\s*:\s*/i;

/** Plans, intentions and guesses, not findings. */
const INTENT = /^(?:i|we|let me|let's|i'll|we'll|i will|we will|now|next|then|first|you|since|so|if|when)\b|^(?:the (?:plan|fix|solution|approach|user)|this (?:plan|fix|approach))\b|\b(?:i'll|i will|let me|let's|we'll)\b/i;
const SPECULATION = /\b(?:may|might|could|probably|perhaps|possibly|seems?|maybe|likely)\b/i;
const QUESTION = /[?:]\s*$/;
const MIN_WORDS = 6;

const MAX_PER_TURN = 3;

export function extractInvariants(view: SessionView): Candidate[] {
  const out: Candidate[] = [];
  for (const turn of view.turns) {
    if (!view.isNew(turn) || !view.isAgentText(turn)) continue;
    let kept = 0;
    for (const raw of sentences(turn.text)) {
      if (kept >= MAX_PER_TURN) break;
      const sentence = stripMarkdown(raw);
      if (sentence.length < 25 || sentence.length > 400 || QUESTION.test(sentence)) continue;
      const body = sentence.replace(LABEL, '');
      if (!CUE.test(body) || INTENT.test(body) || SPECULATION.test(body) || !hasSpecific(body)) continue;
      if (body.split(/\s+/).length < MIN_WORDS) continue;
      kept++;
      const text = oneLine(sentence, 320);
      out.push(
        candidate(view, turn, {
          text,
          kind: 'fact',
          extractor: 'invariant',
          importance: 0.7,
          tags: ['invariant'],
        }),
      );
    }
  }
  return out;
}
