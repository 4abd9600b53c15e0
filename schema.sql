-- mcpreel's database schema, version 7 (PRAGMA user_version = 7).
--
-- mcpreel applies this file to a new database and migrates older ones in
-- code (store/store.c).  The tables and views here are a public interface:
-- people query them with sqlite3, so names are plain and each column says
-- what it holds.  Times are integers: *_ts_ns / ts_ns is wall-clock time in
-- nanoseconds since the Unix epoch; mono_ns is a monotonic clock in
-- nanoseconds (only differences between rows of one session mean anything).

-- One row per recording session: a run of `mcpreel record` over stdio, or
-- one MCP session seen by `mcpreel record --listen` (keyed by the
-- Mcp-Session-Id the server issued, or the legacy sessionId; traffic with
-- neither goes to one session per run).
CREATE TABLE sessions (
  id              INTEGER PRIMARY KEY,
  name            TEXT,                -- --name, or NULL
  transport       TEXT NOT NULL,       -- 'stdio', 'http' (Streamable HTTP)
                                       -- or 'sse' (legacy HTTP+SSE)
  target          TEXT NOT NULL,       -- the server: its argv as a JSON
                                       -- array, or the upstream URL
  started_ns      INTEGER NOT NULL,    -- when recording began (wall clock);
                                       -- over HTTP, when the session's
                                       -- first request came
  ended_ns        INTEGER,             -- when it ended; NULL if still running
                                       -- or the recorder was killed
  exit_status     INTEGER,             -- the server's exit status; 128+N if
                                       -- signal N killed it
  exit_signal     INTEGER,             -- the signal that killed it, or NULL
  end_reason      TEXT,                -- how the session ended, in words
  messages_lost   INTEGER NOT NULL DEFAULT 0,
                                       -- forwarded but not recorded (disk
                                       -- trouble); the wire lost nothing
  store_error     TEXT,                -- why recording stopped before the
                                       -- session ended (disk full, read-only
                                       -- file), or NULL
  imported_from   TEXT,                -- for `mcpreel import`: the file and
                                       -- its format; NULL when recorded
  recorder_pid    INTEGER,             -- pid of the mcpreel that recorded it
  mcpreel_version TEXT,
  origin          TEXT NOT NULL DEFAULT 'record',
                                       -- what made it: 'record', 'import',
                                       -- 'replay' (replay's own recording)
                                       -- or 'mock' (mock's fallback traffic)
  otlp_dropped    INTEGER,             -- --otlp: the spans of this session
                                       -- not delivered to the OpenTelemetry
                                       -- collector (0: all were); NULL when
                                       -- it was not exported
  client_address  TEXT,                -- over HTTP: the address of the client
  client_port     INTEGER              -- connection that began the session
                                       -- (record --otlp); NULL otherwise
);

-- Every message forwarded, in either direction, as the exact bytes (less
-- what `record` redacts: see redacted).
CREATE TABLE messages (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  seq         INTEGER NOT NULL,        -- order the proxy saw them, from 1
  direction   TEXT NOT NULL CHECK (direction = 'c2s' OR direction = 's2c'),
  ts_ns       INTEGER NOT NULL,        -- wall clock when it was complete
  mono_ns     INTEGER NOT NULL,        -- monotonic clock, same moment
  kind        TEXT NOT NULL CHECK (kind = 'request' OR kind = 'response'
                OR kind = 'error' OR kind = 'notification' OR kind = 'batch'
                OR kind = 'invalid'),
                                       -- (OR, not IN: SQLite builds an IN
                                       -- list's table anew for every row)
  method      TEXT,                    -- for responses: their request's
  rpc_id      TEXT,                    -- the id's JSON text as written:
                                       -- 7 or "abc" (with quotes)
  reply_to    INTEGER REFERENCES messages(id),
                                       -- responses and errors: the request
                                       -- (messages.id) they answer
  size        INTEGER NOT NULL,        -- length of raw in bytes (see
                                       -- wire_size)
  http_exchange_id INTEGER REFERENCES http_exchanges(id),
                                       -- over HTTP: the request it came in
  sse_event_id TEXT,                   -- the SSE event's id, if it had one
  wire_size   INTEGER,                 -- NULL when raw is exactly the bytes
                                       -- forwarded; else their length (raw
                                       -- is then a prefix, or redacted)
  sha256      TEXT,                    -- with a prefix: the SHA-256 of all
                                       -- the bytes forwarded, in hex; not
                                       -- for a whole message redacted (with
                                       -- the rest of its bytes in raw, it
                                       -- would test guesses of a secret)
  truncated   INTEGER NOT NULL DEFAULT 0,
                                       -- 1: raw is only the first bytes (the
                                       -- message was above the record cap)
  redacted    INTEGER NOT NULL DEFAULT 0,
                                       -- 1: secrets in raw were replaced by
                                       -- "[REDACTED]" (record's built-in
                                       -- rules, --redact-key, --redact-regex)
                                       -- and wire_size is the length sent
  fault       INTEGER,                 -- record/mock --fault: the n (in
                                       -- faults) of the fault this message
                                       -- belongs to; NULL for untouched
                                       -- traffic
  fault_role  TEXT CHECK (fault_role IS NULL OR fault_role = 'original'
                OR fault_role = 'injected' OR fault_role = 'delayed'),
                                       -- what it is to that fault:
                                       -- 'original': as its sender sent it,
                                       -- but the receiver did not get it as
                                       -- is (dropped, answered in its place,
                                       -- corrupted, mutated, held past a
                                       -- timeout); 'injected': made by
                                       -- mcpreel, its sender never sent it
                                       -- (an injected error, corrupt bytes,
                                       -- a mutated message as forwarded);
                                       -- 'delayed': forwarded unchanged,
                                       -- late.  What passed between
                                       -- mcpreel and the server (what
                                       -- check, replay and mock read) is
                                       -- a c2s 'injected' or a s2c
                                       -- 'original' message, never a c2s
                                       -- 'original' or a s2c 'injected'
  raw         BLOB NOT NULL,           -- exactly the bytes forwarded (unless
                                       -- truncated or redacted), without
                                       -- the newline that framed them (over
                                       -- HTTP: a body, or one SSE event's
                                       -- data).  The last column, so that a
                                       -- huge message is written in pieces
                                       -- without a copy of the whole row
  UNIQUE (session_id, seq)
);
-- Only responses and errors have a reply_to: the index leaves out the
-- other half of the rows (pairing still finds it: r.reply_to = q.id
-- implies reply_to IS NOT NULL).
CREATE INDEX messages_reply_to ON messages(reply_to)
  WHERE reply_to IS NOT NULL;

-- What happened around the messages: the server's stderr, one row a line,
-- and its life: 'spawn' (text: argv), 'exit' (text: how it ended), 'note'
-- (things mcpreel saw: an unterminated last line, a client that closed a
-- stream, an upstream that could not be reached).
CREATE TABLE events (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  ts_ns       INTEGER NOT NULL,
  mono_ns     INTEGER NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('stderr', 'spawn', 'exit',
                'note')),
  text        BLOB NOT NULL            -- a stderr line is kept as bytes;
                                       -- record's redaction rules apply
);
CREATE INDEX events_session ON events(session_id, mono_ns);

-- One row per fault mcpreel injected (record --fault, mock --fault): which
-- rule, what it did, to which message.  The messages it concerns carry its
-- n in messages.fault (with their fault_role), an HTTP response it made in
-- http_exchanges.fault.
CREATE TABLE faults (
  id          INTEGER PRIMARY KEY,
  session_id  INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  n           INTEGER NOT NULL,        -- from 1 in each session
  ts_ns       INTEGER NOT NULL,
  mono_ns     INTEGER NOT NULL,
  rule_index  INTEGER NOT NULL,        -- the rule's place among the --fault
                                       -- and --faults rules, from 1
  rule        TEXT NOT NULL,           -- the rule, as text
  action      TEXT NOT NULL,           -- 'delay', 'error', 'tool-error',
                                       -- 'drop', 'timeout', 'corrupt',
                                       -- 'close', 'http-status', 'mutate'
  direction   TEXT,                    -- of the message it selected: 'c2s'
                                       -- or 's2c'; NULL for none
  method      TEXT,                    -- that message's method (for a
                                       -- response, its request's), or NULL
  rpc_id      TEXT,                    -- its id's JSON text, or NULL
  detail      TEXT,                    -- what was done, in words
  UNIQUE (session_id, n)
);

-- One row per HTTP request forwarded by `mcpreel record --listen`, with its
-- response.  Header values that are credentials (Authorization, Cookie,
-- Set-Cookie, Proxy-Authorization, Mcp-Param-*, Mcp-Session-Id, any
-- --redact-header, and a header named like a member record redacts, such
-- as X-Api-Key) are stored as "[REDACTED]"; so is a sessionId in a path,
-- and the part of a value, a path or a body that looks like a credential.
CREATE TABLE http_exchanges (
  id               INTEGER PRIMARY KEY,
  session_id       INTEGER NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  connection       INTEGER NOT NULL,   -- the client connection, from 1 in
                                       -- each run
  method           TEXT NOT NULL,
  path             TEXT NOT NULL,      -- the request-target the client sent
  request_headers  TEXT NOT NULL,      -- JSON array of [name, value]
  started_ns       INTEGER NOT NULL,   -- wall clock at the request head
  mono_ns          INTEGER NOT NULL,
  status           INTEGER,            -- NULL when no response came
  response_headers TEXT,               -- JSON array of [name, value]
  response_mono_ns INTEGER,            -- when the response head came
  ended_ns         INTEGER,
  outcome          TEXT,               -- 'complete'; 'the client ended the
                                       -- stream' (one that owed it no
                                       -- answer); or what went wrong
  body             BLOB,               -- a response body that held no
                                       -- JSON-RPC (an error page), at most
                                       -- 64 KiB of it
  request_trailers TEXT,               -- a chunked request's trailer
                                       -- fields, JSON array of [name,
                                       -- value] (redacted as headers are);
                                       -- NULL when it had none
  response_trailers TEXT,              -- the same for the response
  fault            INTEGER             -- the n (in faults) of the fault
                                       -- that made this response (an
                                       -- injected status, a reset, a stream
                                       -- ended mid-way), or NULL
);
CREATE INDEX http_exchanges_session ON http_exchanges(session_id);

-- Each request with its response (NULL columns while unanswered) and the
-- round-trip latency as the proxy saw it.  direction is the request's:
-- 'c2s' for the host's requests, 's2c' for the server's (sampling, roots,
-- elicitation, ping).
CREATE VIEW exchanges AS
SELECT q.session_id            AS session_id,
       q.direction             AS direction,
       q.method                AS method,
       q.rpc_id                AS rpc_id,
       q.seq                   AS request_seq,
       r.seq                   AS response_seq,
       r.kind                  AS outcome,     -- 'response', 'error', NULL
       q.ts_ns                 AS request_ts_ns,
       r.mono_ns - q.mono_ns   AS latency_ns,
       q.raw                   AS request,
       r.raw                   AS response
  FROM messages q
  LEFT JOIN messages r ON r.reply_to = q.id
 WHERE q.kind = 'request';
