-- ste baseline store on PostgreSQL: from schema version 2 to 3 (the
-- history of selections and audits: store/include/ste/baseline_store.h,
-- "The history"; read by `ste report`).
--
-- Compiled into ste like schema.sql (store/CMakeLists.txt):
-- OpenPostgresStore applies it, in the transaction and under the advisory
-- lock that applies migrate-2.sql, to a store below version 3. By hand,
-- after migrate-2.sql:
--
--   psql -v ON_ERROR_STOP=1 --single-transaction -f migrate-3.sql 'postgresql://...'
--
-- Once applied, a ste from before version 3 refuses the store ("newer than
-- this ste understands"): upgrade every machine that uses it first.
-- Never edited in place once released.
--
--  * ste.selections: one row per `ste select` (and per scheduler Select),
--    appended by one INSERT: the server's clock, the baseline compared
--    with (0: none; no reference, gc may remove it), the commit, the mode
--    and reason, the counts, the recorded seconds of the tests left out,
--    how long the select took, and where it ran.
--  * ste.audits: one row per `ste audit` or `ste record --observe`: the
--    counts, and the missed and flaky tests' names, each followed by a
--    NUL byte (bytea: a name is bytes).

CREATE TABLE ste.selections (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_unix         bigint NOT NULL,
  baseline        bigint NOT NULL,
  commit_id       text NOT NULL,
  mode            text NOT NULL CHECK (mode IN ('all', 'subset', 'none')),
  reason          text NOT NULL,
  tests           bigint NOT NULL CHECK (tests >= 0),
  selected        bigint NOT NULL CHECK (selected >= 0),
  changed         bigint NOT NULL CHECK (changed >= 0),
  skipped_seconds double precision NOT NULL,
  seconds         double precision NOT NULL,
  origin          text NOT NULL
);

CREATE TABLE ste.audits (
  id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  at_unix   bigint NOT NULL,
  baseline  bigint NOT NULL,
  commit_id text NOT NULL,
  kind      text NOT NULL CHECK (kind IN ('audit', 'observe')),
  left_out  bigint NOT NULL CHECK (left_out >= 0),
  ran       bigint NOT NULL CHECK (ran >= 0),
  misses    bigint NOT NULL CHECK (misses >= 0),
  flakes    bigint NOT NULL CHECK (flakes >= 0),
  missed    bytea NOT NULL,
  flaky     bytea NOT NULL
);

UPDATE ste.meta SET value = '3' WHERE key = 'schema_version';
