import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";

/**
 * Tables of the edge's D1 database: what spans conversations (tenants, their API keys, the audit log and the
 * per-tenant conversation index). A conversation's own data lives in its Durable Object.
 */
export const conversationIndex = sqliteTable(
  "conversation_index",
  {
    tenantId: text("tenant_id").notNull(),
    id: text("id").notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
    metadata: text("metadata", { mode: "json" }).$type<Record<string, string>>().notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.tenantId, t.id] }),
    index("conversation_index_by_time").on(t.tenantId, t.createdAt, t.id),
  ],
);

export const tenants = sqliteTable(
  "tenants",
  {
    /** `ten_…`; `dev` for the local mesh's bootstrapped tenant. */
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
    /** Keys of a tenant that is not `active` are refused. */
    status: text("status", { enum: ["active", "suspended"] })
      .notNull()
      .default("active"),
  },
  (t) => [index("tenants_by_time").on(t.createdAt, t.id)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    /** `key_…`. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id")
      .notNull()
      .references(() => tenants.id),
    name: text("name"),
    /** The key's public part, what a presented key is looked up by (see workers/src/tenancy/). */
    prefix: text("prefix").notNull(),
    /** Hex SHA-256 of the whole key: the key itself is never stored. */
    secretHash: text("secret_hash").notNull(),
    /** The key's last four characters, so people can tell keys apart. */
    last4: text("last4").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
    /** Unix seconds from which the key is refused; in the future while a rotation's grace period runs. */
    revokedAt: integer("revoked_at"),
    /** The key this one replaced. Unique: a key is rotated at most once, even by two concurrent requests. */
    rotatedFrom: text("rotated_from"),
  },
  (t) => [
    uniqueIndex("api_keys_by_prefix").on(t.prefix),
    uniqueIndex("api_keys_by_rotated_from").on(t.rotatedFrom),
    index("api_keys_by_tenant").on(t.tenantId, t.createdAt, t.id),
  ],
);

/** Append-only (a migration's triggers refuse UPDATE and DELETE): every change to tenants and keys. */
export const auditLog = sqliteTable(
  "audit_log",
  {
    seq: integer("seq").primaryKey({ autoIncrement: true }),
    tenantId: text("tenant_id").notNull(),
    /** `admin` (the operator's token), `system` (the dev bootstrap) or the key id that acted. */
    actor: text("actor").notNull(),
    /** `tenant.created`, `api_key.created`, `api_key.rotated`, `api_key.revoked`. */
    action: text("action").notNull(),
    /** Id of the tenant or key acted on. */
    target: text("target").notNull(),
    details: text("details", { mode: "json" }).$type<Record<string, unknown>>().notNull(),
    /** Unix seconds. */
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("audit_log_by_tenant").on(t.tenantId, t.seq)],
);
