import type { Readable, Writable } from 'node:stream';
import type { Cairn } from '../cairn.js';
import { createEmbedderFromSpec, loadConfig, openCairn, prepareStoreLocation, type Config } from '../config.js';

/** The process around a CLI run, injected so tests drive the CLI in-process. */
export interface CliIo {
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  stdin: Readable & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export interface GlobalOptions {
  home?: string;
  json?: boolean;
  /** `--store`: a SQLite path or a `postgres://` URL. */
  store?: string;
}

/** What every command handler gets: output helpers and a lazily opened cairn. */
export class CommandContext {
  readonly json: boolean;
  /** Set by a command that finished but must report failure (e.g. doctor with a failed check). */
  exitCode = 0;
  private configCache: Config | null = null;
  private opened: Cairn | null = null;

  constructor(
    readonly io: CliIo,
    readonly globals: GlobalOptions,
  ) {
    this.json = globals.json === true;
  }

  get config(): Config {
    this.configCache ??= loadConfig({ home: this.globals.home, store: this.globals.store, env: this.io.env });
    return this.configCache;
  }

  async cairn(actor = 'cli'): Promise<Cairn> {
    if (!this.opened) {
      prepareStoreLocation(this.config, (line) => this.note(line));
      const { cairn } = await openCairn(this.config, {
        cwd: this.io.cwd,
        actor,
        makeEmbedder: (spec) => createEmbedderFromSpec(spec, this.config),
        // A CLI process is short-lived: writes never load a model; the background fill embeds them.
        deferVectors: true,
      });
      this.opened = cairn;
    }
    return this.opened;
  }

  async close(): Promise<void> {
    await this.opened?.close();
    this.opened = null;
  }

  /** Print a line to stdout. */
  out(text = ''): void {
    this.io.stdout.write(`${text}\n`);
  }

  /** Print a value as JSON to stdout (the `--json` contract: one JSON document per command). */
  printJson(value: unknown): void {
    this.io.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** Human-readable progress and notes go to stderr so stdout stays parseable. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }
}
