-- The injection ledger (see the SQLite migration 008_injection_ledger.sql): what each hook and
-- MCP tool gave the agent, per session and context window; ids only.

CREATE TABLE ledger_windows (
  session_id text NOT NULL,
  win        integer NOT NULL,
  at         bigint NOT NULL,
  reason     text NOT NULL,
  project    text,
  PRIMARY KEY (session_id, win)
);

CREATE TABLE ledger_injections (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id  text NOT NULL,
  win         integer NOT NULL,
  at          bigint NOT NULL,
  via         text NOT NULL,
  name        text NOT NULL,
  target      text NOT NULL,
  tokens      integer NOT NULL,
  project     text,
  measured_at bigint
);
CREATE INDEX ledger_injections_session ON ledger_injections (session_id, win);
CREATE INDEX ledger_injections_at ON ledger_injections (at);

CREATE TABLE ledger_items (
  injection_id bigint NOT NULL,
  item_id      text NOT NULL,
  kind         text NOT NULL,
  ord          integer NOT NULL,
  used         boolean,
  PRIMARY KEY (injection_id, item_id)
);
CREATE INDEX ledger_items_item ON ledger_items (item_id);
