import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { TokenStore } from '../../auth/tokens.js';
import { createEmbedderFromSpec, indexEmbedder, openStoreSpec, prepareStoreLocation } from '../../config.js';
import { streamLogger, systemClock, ulidSource } from '../../runtime.js';
import { DEFAULT_HOST, DEFAULT_PORT, startServe } from '../../serve/server.js';
import type { Embedder } from '../../types.js';
import { positiveInt, type Run } from './memory.js';

function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function port(value: string): number {
  return value === '0' ? 0 : positiveInt('port')(value);
}

export function registerServeCommand(program: Command, run: Run): void {
  run(
    program
      .command('serve')
      .summary('MCP over HTTP and a JSON API for a team, with tokens')
      .description(
        'Serve MCP over Streamable HTTP at /mcp and a JSON API under /api (remember, recall, forget, status …) on the configured store.\n' +
          'Stateless: run several behind a load balancer on one PostgreSQL database. Every request needs Authorization: Bearer <token>\n' +
          '(`cairn token create`); the project comes from the X-Cairn-Project header or the token’s only project.\n' +
          'Listens on loopback unless --host says otherwise, which needs tokens to exist.\n' +
          'Once a request loaded the embedding model, memories still without a vector are embedded while no request has\n' +
          'come for 3 s, a few at a time (like the MCP server; it continues a model switch too). CAIRN_IDLE_FILL=0 turns it off.',
      )
      .option('--port <n>', `TCP port (0 picks a free one; default ${DEFAULT_PORT})`, port)
      .option('--host <host>', `address to bind (default ${DEFAULT_HOST})`),
    async (ctx, opts: { port?: number; host?: string }) => {
      prepareStoreLocation(ctx.config, (line) => ctx.note(line));
      // Hybrid recalls run BM25 in a worker thread beside the query embedding and vector search.
      const store = await openStoreSpec(ctx.config.store, ctx.config.embedder ? { textSearch: 'worker' } : {});
      let embedder: Embedder | null = null;
      const stops: Array<() => Promise<void>> = [];
      try {
        if (ctx.config.embedder) embedder = await createEmbedderFromSpec(ctx.config.embedder, ctx.config);
        const logger = streamLogger((line) => ctx.io.stderr.write(line), 'warn');
        // Like the MCP server: once a request loaded the model, fill missing vectors (or continue a
        // model switch) while no request has come for a moment (CAIRN_IDLE_FILL=0 turns it off);
        // during a switch, recall searches the old index with its own model, loaded once.
        const config = ctx.config;
        const vectors = embedder
          ? (await import('../../embed/server-fill.js')).serverVectors({
              store,
              embedder,
              loadIndexEmbedder: (index) => indexEmbedder(index, (spec) => createEmbedderFromSpec(spec, config), store),
              logger,
              fill: ctx.io.env.CAIRN_IDLE_FILL !== '0',
            })
          : null;
        if (vectors) stops.push(() => vectors.stop());
        const server = await startServe({
          store,
          embedder,
          ...(vectors ? { indexEmbedder: vectors.indexEmbedder, onActivity: vectors.onActivity } : {}),
          tokens: new TokenStore(store, { clock: systemClock, ids: ulidSource() }),
          version: packageVersion(),
          logger,
          ...(opts.port !== undefined ? { port: opts.port } : {}),
          ...(opts.host !== undefined ? { host: opts.host } : {}),
        });
        if (ctx.json) ctx.printJson({ url: server.url, mcp: `${server.url}/mcp`, store: store.location, localToken: server.localToken });
        else {
          ctx.out(`cairn serve listening on ${server.url} (MCP at ${server.url}/mcp, JSON API at ${server.url}/api) — store ${store.location}`);
          if (server.localToken) {
            ctx.out(`no tokens are stored; this process accepts a one-off admin token: ${server.localToken}`);
          }
        }
        await new Promise<void>((resolve) => {
          process.once('SIGINT', resolve);
          process.once('SIGTERM', resolve);
        });
        await server.close();
      } finally {
        for (const stop of stops) await stop();
        await embedder?.close?.();
        await store.close();
      }
    },
  );
}
