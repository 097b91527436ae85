-- ste baseline store on PostgreSQL: schema version 1.
--
-- This file is the schema: scheduler/CMakeLists.txt compiles it into ste
-- (postgres_store.cc), which applies it inside one transaction, under an
-- advisory lock, the first time it opens a database without a "ste"
-- schema. To create it by hand instead (a DBA, a role without CREATE on
-- the database for ste afterwards):
--
--   psql -v ON_ERROR_STOP=1 --single-transaction -f schema.sql 'postgresql://...'
--
-- and then each migration, in order (migrate-2.sql: resumable builds;
-- migrate-3.sql: the history of selections and audits).
--
-- Everything lives in the PostgreSQL schema "ste", so the store can share a
-- database with other applications. A new version adds a migration in
-- OpenPostgresStore and bumps meta.schema_version; this text is never
-- edited in place once released.
--
-- Design notes (scheduler/src/postgres_store.h has the whole story):
--  * LatestCompleted ("the complete baseline with the highest mri <= X,
--    ties to the highest id") is one descent of the partial index
--    baselines_complete_by_mri: its rows are exactly the complete
--    baselines, already in the ORDER BY's order, so the plan is an Index
--    Scan with the mri bound as its Index Cond, LIMIT 1, no sort, no
--    filter on state.
--  * Blob bytes (the selection index, the inventory: megabytes each) live
--    in their own table, one row per blob, TOASTed out of line and
--    uncompressed (STORAGE EXTERNAL: roaring bitmaps and hashes do not
--    compress, and uncompressed TOAST lets substring() read one slice).
--    Every other query touches only the small rows of baselines, results
--    and blobs; the bytes are read only by BlobPath(), in slices, into a
--    local cache file that the selection mmaps.
--  * Test names sort bytewise (COLLATE "C"), as in the SQLite store,
--    whatever the database's default collation.

CREATE SCHEMA ste;

CREATE TABLE ste.meta (
  key   text PRIMARY KEY,
  value text NOT NULL
);

INSERT INTO ste.meta (key, value) VALUES
  ('magic', 'ste baseline store'),
  ('schema_version', '1');

-- One record build. state: 0 building, 1 complete, 2 failed
-- (ste::BaselineState). Times are the server's clock, seconds since the
-- epoch; completed_unix is 0 until Complete().
CREATE TABLE ste.baselines (
  id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,  -- never reused
  commit_id      text NOT NULL,
  mri            bigint NOT NULL CHECK (mri >= 0),
  state          smallint NOT NULL CHECK (state IN (0, 1, 2)),
  created_unix   bigint NOT NULL,
  completed_unix bigint NOT NULL DEFAULT 0,
  failure        text NOT NULL DEFAULT ''
);

-- LatestCompleted:
--   SELECT ... FROM ste.baselines WHERE state = 1 AND mri <= $1
--   ORDER BY mri DESC, id DESC LIMIT 1
CREATE INDEX baselines_complete_by_mri
  ON ste.baselines (mri DESC, id DESC) WHERE state = 1;

-- NextMri: max(mri) over baselines of any state.
CREATE INDEX baselines_by_mri ON ste.baselines (mri);

-- One test's result in a baseline. outcome: 0 passed, 1 failed, 2 error
-- (ste::TestOutcome).
CREATE TABLE ste.results (
  baseline  bigint NOT NULL REFERENCES ste.baselines (id),
  test      text COLLATE "C" NOT NULL,
  outcome   smallint NOT NULL CHECK (outcome IN (0, 1, 2)),
  exit_code integer NOT NULL,
  seconds   double precision NOT NULL,
  opaque    boolean NOT NULL,
  PRIMARY KEY (baseline, test)
);

-- What is known of a blob without reading it: its size and its XXH3-128
-- (32 lowercase hex digits of the canonical big-endian form, what
-- `xxh128sum` prints). Written in the same transaction as its bytes.
CREATE TABLE ste.blobs (
  baseline bigint NOT NULL REFERENCES ste.baselines (id),
  name     text COLLATE "C" NOT NULL CHECK (name ~ '^[a-z0-9][a-z0-9_.-]{0,63}$'),
  size     bigint NOT NULL CHECK (size >= 0),
  xxh3_128 text NOT NULL CHECK (xxh3_128 ~ '^[0-9a-f]{32}$'),
  PRIMARY KEY (baseline, name)
);

-- The bytes of a blob, one row per blob, fetched only by BlobPath().
-- (bytea: at most 1 GB a value; ste refuses blobs over 1000 MiB.)
CREATE TABLE ste.blob_contents (
  baseline bigint NOT NULL,
  name     text COLLATE "C" NOT NULL,
  bytes    bytea NOT NULL,
  PRIMARY KEY (baseline, name),
  FOREIGN KEY (baseline, name) REFERENCES ste.blobs (baseline, name)
    ON DELETE CASCADE
);
ALTER TABLE ste.blob_contents ALTER COLUMN bytes SET STORAGE EXTERNAL;
