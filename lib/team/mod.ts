/**
 * The team store: replicate a store's sealed events to a central
 * PostgreSQL database (checked on arrival, idempotent, behind the
 * acknowledgement), and read captures from it like a local store.
 *
 * @module
 */
export {
  connectDb,
  migrate,
  POSTGRES_CLIENT,
  type Sql,
  TEAM_SCHEMA_VERSION,
} from "./db.ts";
export { TeamDbError } from "./db_error.ts";
export {
  type DbEnvironment,
  type DbTarget,
  resolveDbTarget,
} from "./db_target.ts";
export { pushCapture, type PushOptions, type PushResult } from "./push.ts";
export {
  type ReplicationStatus,
  Replicator,
  type ReplicatorOptions,
} from "./replicator.ts";
export { DbStore, TeamCaptureError } from "./db_store.ts";
export { storeId } from "./store_id.ts";
