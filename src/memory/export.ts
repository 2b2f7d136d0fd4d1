import { KINDS, type Memory, type Provenance } from '../types.js';

/** The primary source only: the import line takes one (`also` lists merged duplicates). */
function withoutAlso(provenance: Provenance): Omit<Provenance, 'also'> {
  const { also: _also, ...primary } = provenance;
  return primary;
}

/** One memory as an import-compatible JSONL object (round-trips through importJsonl). */
export function toExportLine(memory: Memory): Record<string, unknown> {
  return {
    text: memory.text,
    kind: memory.kind,
    tags: memory.tags,
    scope: memory.scope,
    project: memory.project,
    importance: memory.importance,
    createdAt: new Date(memory.createdAt).toISOString(),
    meta: { ...memory.meta, id: memory.id, source: memory.source, pinned: memory.pinned, files: memory.files },
    ...(memory.provenance ? { provenance: withoutAlso(memory.provenance) } : {}),
    // Always written for a conversation turn, so a re-import keeps it as it was (null: none).
    ...(memory.context !== null || memory.provenance?.line !== undefined ? { context: memory.context } : {}),
  };
}

/** Memories as Markdown, grouped by kind, each with its id, tags and files. */
export function toMarkdown(memories: Memory[], title = 'cairn memories'): string {
  const out: string[] = [`# ${title}`, ''];
  for (const kind of KINDS) {
    const group = memories.filter((m) => m.kind === kind);
    if (group.length === 0) continue;
    out.push(`## ${kind[0]?.toUpperCase()}${kind.slice(1)}s`, '');
    for (const memory of group) {
      const tags = memory.tags.length > 0 ? ` ${memory.tags.map((t) => `#${t}`).join(' ')}` : '';
      const text = memory.text.replace(/\n/g, '\n  ');
      out.push(`- ${text}${tags} <!-- ${memory.id} · ${memory.scope} · ${new Date(memory.createdAt).toISOString().slice(0, 10)} -->`);
    }
    out.push('');
  }
  return out.join('\n');
}
