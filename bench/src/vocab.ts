/**
 * Word lists the synthetic corpus is drawn from: what a coding agent's memory talks about.
 * Changing any list changes every generated corpus: bump CORPUS_VERSION in corpus.ts.
 */

const words = (text: string): readonly string[] => Object.freeze(text.trim().split(/\s+/));

export const VERBS = words(`
  get set load save parse resolve build create update delete fetch sync flush apply compute render
  validate normalize merge split encode decode read write open close init start stop handle process
  dispatch schedule retry refresh invalidate collect emit register unregister attach detach compile
  transform serialize deserialize hydrate migrate index query scan watch debounce throttle reconcile
  prune evict commit rollback lock unlock acquire release spawn drain poll format bundle patch hash
  sign verify allocate enqueue dequeue lookup upsert insert remove reset restore snapshot replay
`);

export const QUALIFIERS = words(`
  stale pending active cached remote local default raw partial nested async batch inline lazy dirty
  shared global user project session workspace token request response worker stream file path config
  schema primary secondary legacy next current previous max min total empty unique sorted grouped
  expired retry fallback upstream downstream incoming outgoing deferred eager scoped signed
`);

export const NOUNS = words(`
  cache config token user session workspace file path buffer queue worker handler client server
  request response router middleware schema model record entry index store table row column cursor
  offset batch chunk frame event listener hook plugin module package manifest lockfile build bundle
  asset image thread pool connection socket channel message payload header body cookie credential
  key policy role permission tenant account invoice order cart product price rate limit quota metric
  span trace log error backoff timer clock deadline timeout snapshot diff patch commit branch tag
  release version migration seed fixture mock stub test suite runner report coverage watcher parser
  lexer token tree node graph edge vertex matrix vector embedding score ranker filter query plan job
  task step stage pipeline artifact registry mirror proxy gateway endpoint route controller service
  repository adapter driver dialect transaction lease lock mutex semaphore signal state reducer action
  selector component prop layout theme style font icon modal dialog form field input validator
`);

/** Libraries and tools decisions are made between. */
export const LIBRARIES = words(`
  zod yup vitest jest mocha pytest tokio actix axum serde sqlx diesel prisma drizzle kysely knex
  express fastify hono koa nestjs django flask fastapi rails sinatra gin echo chi redis memcached
  postgres sqlite duckdb kafka rabbitmq nats grpc protobuf msgpack esbuild vite webpack rollup turbo
  pnpm yarn bun poetry uv cargo gradle maven bazel docker podman terraform helm kubectl
`);

export const ERRORS = words(`
  ECONNRESET ETIMEDOUT ENOENT EADDRINUSE EACCES SQLITE_BUSY SQLITE_LOCKED TypeError RangeError
  KeyError ValueError AttributeError NullPointerException IllegalStateException ConcurrentModificationException
  UnhandledPromiseRejection DeadlineExceeded ConnectionRefused BorrowError PoisonError
`);

export const PROJECTS = Object.freeze([
  'github.com/acme/api-gateway',
  'github.com/acme/web-dashboard',
  'github.com/acme/billing-service',
  'github.com/acme/ingest-pipeline',
  'github.com/acme/mobile-app',
  'github.com/acme/infra',
  'github.com/oss/fast-json-parser',
  'github.com/oss/rust-kv',
  '/home/dev/scratch/notes',
  '/home/dev/side/game-jam',
] as const);

/** Tags by descending frequency (drawn Zipf-like). */
export const TAGS = words(`
  bug tests api db perf build ci auth config deploy refactor security ui types deps docs migration
  flaky cache logging errors review release infra monitoring windows macos linux onboarding style
  lint concurrency memory network retry cli parser storage search
`);

/** Words a user puts around an identifier or a location when asking for it. */
export const PARAPHRASES = words(`
  where signature defined callers usage bug fix tests behaviour definition implementation location
  handles returns throws config caveat gotcha
`);

export const TEST_RUNNERS: Readonly<Record<string, readonly string[]>> = {
  ts: ['pnpm vitest run', 'npx vitest run', 'npm test --', 'pnpm jest', 'yarn test'],
  py: ['pytest', 'uv run pytest', 'python -m pytest', 'poetry run pytest'],
  rs: ['cargo test', 'cargo nextest run', 'cargo test --release'],
  go: ['go test', 'go test -race', 'gotestsum --'],
  java: ['./gradlew test', 'mvn -q test'],
  rb: ['bundle exec rspec', 'bin/rails test'],
};

export const SHELL_COMMANDS = Object.freeze([
  'docker compose up -d postgres redis',
  'git rebase -i HEAD~3',
  'git bisect run ./scripts/check.sh',
  'pnpm install --frozen-lockfile',
  'npm run build -- --watch',
  'make lint',
  'kubectl rollout restart deploy/api -n staging',
  'psql -h localhost -U dev -d app_dev -c "VACUUM ANALYZE"',
  'rg -n --hidden "TODO|FIXME" src',
  'cargo clippy --all-targets -- -D warnings',
  'go vet ./...',
  'ruff check --fix .',
  'terraform plan -out=tfplan -var-file=staging.tfvars',
  'node --cpu-prof --cpu-prof-dir=/tmp/prof dist/cli.js',
  'gh pr checks --watch',
  'sqlite3 data/app.db ".schema memories"',
] as const);

export const PROSE = Object.freeze([
  'It was discussed in review and agreed with the team.',
  'Keep this in mind when touching the surrounding code.',
  'The old behaviour is still documented in the wiki but no longer true.',
  'This only shows up under load, never in unit tests.',
  'Do not revert this without talking to the user first.',
  'The user was explicit about this and repeated it twice.',
  'There is a comment in the code that says the opposite; the comment is outdated.',
  'CI on Windows is the first place this breaks.',
  'It took two sessions to find; the logs were misleading.',
  'Worth a proper fix later, the current patch is a workaround.',
  'This interacts badly with the retry logic when the network is slow.',
  'The benchmark numbers were taken on a laptop on battery, so treat them as rough.',
] as const);
