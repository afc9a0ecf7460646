/**
 * The capture database's schema (./database.ts opens and queries it): one migration per version, applied in order, so a
 * data dir an older Tokenscope wrote is brought up to this one step by step.
 */
/** The newest schema this version knows; `migrate` brings an older file up to it, step by step. */
export const SCHEMA_VERSION = 3;

export const MIGRATIONS: string[] = [
  // 1: the first schema.
  `CREATE TABLE exchanges (
     id TEXT PRIMARY KEY,
     seq INTEGER NOT NULL,
     started_at INTEGER NOT NULL,
     session_id TEXT NOT NULL,
     state TEXT NOT NULL,
     agent TEXT,
     model TEXT,
     provider TEXT,
     broken INTEGER NOT NULL DEFAULT 0,
     req_bytes INTEGER NOT NULL DEFAULT 0,
     resp_bytes INTEGER NOT NULL DEFAULT 0,
     pid INTEGER,
     data TEXT NOT NULL
   );
   CREATE INDEX exchanges_started ON exchanges (started_at, id);
   CREATE INDEX exchanges_seq ON exchanges (seq);
   CREATE INDEX exchanges_model ON exchanges (model, started_at);
   CREATE INDEX exchanges_provider ON exchanges (provider, started_at);
   CREATE INDEX exchanges_agent ON exchanges (agent, started_at);
   CREATE INDEX exchanges_session ON exchanges (session_id, started_at);
   CREATE INDEX exchanges_broken ON exchanges (broken, started_at);
   CREATE TABLE findings (
     exchange_id TEXT NOT NULL,
     rule TEXT NOT NULL,
     severity TEXT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (exchange_id, rule, severity)
   ) WITHOUT ROWID;
   CREATE INDEX findings_rule ON findings (rule, exchange_id);
   CREATE TABLE analyses (exchange_id TEXT PRIMARY KEY, result TEXT NOT NULL);
   CREATE TABLE sessions (id TEXT PRIMARY KEY, agent TEXT, first_at INTEGER NOT NULL, last_at INTEGER NOT NULL);
   CREATE TABLE deleted (id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
   CREATE INDEX deleted_seq ON deleted (seq);
   CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);`,
  // 2: the regression watch list (src/core/watch/list.ts): one row per case, one per re-check of a case.
  `CREATE TABLE watch (id TEXT PRIMARY KEY, n INTEGER NOT NULL, added_at INTEGER NOT NULL, capture_id TEXT NOT NULL, data TEXT NOT NULL);
   CREATE TABLE watch_checks (case_id TEXT NOT NULL, at INTEGER NOT NULL, verdict TEXT NOT NULL, result TEXT NOT NULL);
   CREATE INDEX watch_checks_case ON watch_checks (case_id, at);`,
  // 3: the verdict of the last comparison per model × provider slug (src/core/upstream/compare-verdicts.ts), and
  // OpenRouter's provider display name → slug mapping as its listings give it (src/core/policy/slugs.ts); their row
  // shapes: ./provider-rows.ts.
  `CREATE TABLE IF NOT EXISTS comparisons (model TEXT NOT NULL, provider TEXT NOT NULL, at INTEGER NOT NULL, data TEXT NOT NULL, PRIMARY KEY (model, provider)) WITHOUT ROWID;
   CREATE TABLE IF NOT EXISTS provider_slugs (name_key TEXT PRIMARY KEY, name TEXT NOT NULL, slug TEXT NOT NULL, source TEXT NOT NULL, at INTEGER NOT NULL) WITHOUT ROWID;`,
];
