import type { Command } from 'commander';
import { ROLES, TokenStore, type Role, type TokenInfo } from '../../auth/tokens.js';
import { openStoreSpec, prepareStoreLocation } from '../../config.js';
import { invalid } from '../../errors.js';
import { systemClock, ulidSource } from '../../runtime.js';
import { resolveProject } from '../../workspace/project.js';
import type { CommandContext } from '../context.js';
import { when } from '../format.js';
import { list, type Run } from './memory.js';

async function withTokens<T>(ctx: CommandContext, work: (tokens: TokenStore) => Promise<T>): Promise<T> {
  prepareStoreLocation(ctx.config, (line) => ctx.note(line));
  const store = await openStoreSpec(ctx.config.store);
  try {
    return await work(new TokenStore(store, { clock: systemClock, ids: ulidSource() }));
  } finally {
    await store.close();
  }
}

function tokenLine(t: TokenInfo): string {
  const state = t.revokedAt === null ? '' : `  revoked ${when(t.revokedAt)}`;
  return `${t.id}  ${t.name}  ${t.role}  projects: ${t.projects.join(', ')}  created ${when(t.createdAt)}${state}`;
}

export function registerTokenCommands(program: Command, run: Run): void {
  const token = program
    .command('token')
    .summary('access tokens for `cairn serve`')
    .description('Create, list and revoke the tokens `cairn serve` accepts. Only a hash of each token is stored, in the store itself.');

  run(
    token
      .command('create')
      .summary('create a token (shown once)')
      .requiredOption('--name <name>', 'who or what uses it, e.g. alice or ci')
      .requiredOption('--projects <ids>', 'comma-separated project identities it may use (. for this folder’s project, * for all)', list)
      .option('--role <role>', 'read | write | admin', 'write')
      .addHelpText('after', '\nExample:\n  cairn --store postgres://cairn@db/cairn token create --name ci --projects github.com/acme/api --role read'),
    async (ctx, opts: { name: string; projects: string[]; role: string }) => {
      if (!(ROLES as readonly string[]).includes(opts.role)) throw invalid(`--role must be one of ${ROLES.join(', ')} (got "${opts.role}")`, 'role');
      const projects = opts.projects.map((p) => (p === '.' ? resolveProject(ctx.io.cwd).id : p));
      const created = await withTokens(ctx, (tokens) => tokens.create({ name: opts.name, projects, role: opts.role as Role }));
      if (ctx.json) return ctx.printJson(created);
      ctx.out(created.token);
      ctx.note(`token "${created.record.name}" (${created.record.role}; ${created.record.projects.join(', ')}) — shown once, store it now.`);
      ctx.note('clients send it as: Authorization: Bearer <token>');
    },
  );

  run(token.command('list').summary('list tokens (never their secrets)'), async (ctx) => {
    const tokens = await withTokens(ctx, (t) => t.list());
    if (ctx.json) return ctx.printJson({ tokens });
    if (tokens.length === 0) return ctx.out('no tokens; create one with `cairn token create --name NAME --projects P --role write`');
    for (const t of tokens) ctx.out(tokenLine(t));
  });

  run(
    token.command('revoke').summary('revoke a token by id or name').argument('<id-or-name>'),
    async (ctx, idOrName: string) => {
      const revoked = await withTokens(ctx, (t) => t.revoke(idOrName));
      if (ctx.json) return ctx.printJson({ revoked });
      ctx.out(`revoked ${revoked.name} (${revoked.id})`);
    },
  );
}
