-- The injection ledger: what each hook and MCP tool gave the agent, per session and context
-- window (src/ledger/ledger.ts). Ids only, no text. A window is one context window of a session:
-- 0 at its start, +1 at each compaction or /clear. Hooks and tools read the current window to
-- skip what the agent already has; learn-from-use marks which items were used afterwards.

CREATE TABLE ledger_windows (
  session_id TEXT NOT NULL,
  win        INTEGER NOT NULL,
  at         INTEGER NOT NULL,
  reason     TEXT NOT NULL,
  project    TEXT,
  PRIMARY KEY (session_id, win)
) WITHOUT ROWID;

CREATE TABLE ledger_injections (
  id         INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL,
  win        INTEGER NOT NULL,
  at         INTEGER NOT NULL,
  via        TEXT NOT NULL,
  name       TEXT NOT NULL,
  target     TEXT NOT NULL,
  tokens     INTEGER NOT NULL,
  project    TEXT,
  -- When learn-from-use looked at what came after it; NULL: not measured.
  measured_at INTEGER
);
CREATE INDEX ledger_injections_session ON ledger_injections (session_id, win);
CREATE INDEX ledger_injections_at ON ledger_injections (at);

CREATE TABLE ledger_items (
  injection_id INTEGER NOT NULL,
  item_id      TEXT NOT NULL,
  -- memory | fact | block
  kind         TEXT NOT NULL,
  ord          INTEGER NOT NULL,
  -- 1 used afterwards, 0 not used, NULL not measured.
  used         INTEGER,
  PRIMARY KEY (injection_id, item_id)
) WITHOUT ROWID;
CREATE INDEX ledger_items_item ON ledger_items (item_id);
