-- ste baseline store on PostgreSQL: from schema version 1 to 2 (resumable
-- record builds: scheduler/include/ste/baseline_store.h, "Resumable record
-- builds").
--
-- Compiled into ste like schema.sql (scheduler/CMakeLists.txt):
-- OpenPostgresStore applies it, in one transaction under the same advisory
-- lock as the schema, to a store at version 1 (a new one gets schema.sql,
-- then this). By hand, after schema.sql:
--
--   psql -v ON_ERROR_STOP=1 --single-transaction -f migrate-2.sql 'postgresql://...'
--
-- Once applied, a ste from before version 2 refuses the store ("newer than
-- this ste understands"): upgrade every machine that writes to it first.
-- Never edited in place once released.
--
--  * ste.builds: one row per running resumable build: its owner (the
--    scheduler instance id), a generation (+1 per take-over, so that a
--    scheduler that lost the build cannot write to it), the owner's lease
--    (milliseconds since the epoch on this server's clock, expired when
--    <= now) and the spec it was created with (build_journal.h). Deleted
--    with the journal when the build completes, fails or is removed.
--  * ste.accepted: the journal, one row per accepted result in order of
--    acceptance (seq), the record opaque to SQL (build_journal.h).

CREATE TABLE ste.builds (
  baseline         bigint PRIMARY KEY REFERENCES ste.baselines (id),
  owner            text NOT NULL CHECK (owner <> ''),
  generation       bigint NOT NULL CHECK (generation >= 1),
  lease_expires_ms bigint NOT NULL,
  spec             bytea NOT NULL
);
ALTER TABLE ste.builds ALTER COLUMN spec SET STORAGE EXTERNAL;

CREATE TABLE ste.accepted (
  baseline bigint NOT NULL REFERENCES ste.baselines (id),
  test     text COLLATE "C" NOT NULL,
  seq      bigint NOT NULL,
  record   bytea NOT NULL,
  PRIMARY KEY (baseline, test)
);
CREATE INDEX accepted_in_order ON ste.accepted (baseline, seq);

UPDATE ste.meta SET value = '2' WHERE key = 'schema_version';
