import type { Kind, Scope, TurnRecord } from '../../types.js';
import type { SessionView } from '../session.js';
import type { Candidate, ExtractorName, Subject } from '../types.js';

export interface CandidateInput {
  text: string;
  kind: Kind;
  extractor: ExtractorName;
  importance: number;
  scope?: Scope | null;
  tags?: string[];
  files?: string[];
  subject?: Subject | null;
}

/** A candidate anchored on `turn`, with the turn's provenance and time. */
export function candidate(view: SessionView, turn: TurnRecord, input: CandidateInput): Candidate {
  return {
    text: input.text,
    kind: input.kind,
    scope: input.scope ?? null,
    tags: input.tags ?? [],
    importance: input.importance,
    provenance: view.provenance(turn),
    files: input.files ?? [],
    subject: input.subject ?? null,
    extractor: input.extractor,
    at: turn.at,
    seq: turn.seq,
  };
}

/** An extractor: the candidates one session view yields (only from its new turns). */
export type Extractor = (view: SessionView) => Candidate[];
