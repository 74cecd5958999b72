import { SQL, and, asc, desc, eq, gt, isNull, lt, sql } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { SQLiteAsyncDialect } from "drizzle-orm/sqlite-core";
import { apiKeys, auditLog, tenants } from "../db/tenant-tables.ts";
import { isApiKeyScope } from "../tenancy/api-key-scope.ts";
import { orderByCreation } from "./order-by-creation.ts";
import type { ApiKeyRecord, AuditDraft, TenantStore } from "../tenancy/tenant-store.ts";

type ApiKeyRow = typeof apiKeys.$inferSelect;
/** A query builder or a raw `sql` statement. */
type Statement = SQL | { toSQL(): { sql: string; params: unknown[] } };

const dialect = new SQLiteAsyncDialect();

/** Scopes are JSON in the row; one this build does not know grants nothing. */
function toApiKeyRecord(row: ApiKeyRow): ApiKeyRecord {
  return { ...row, scopes: row.scopes.filter(isApiKeyScope) };
}

/**
 * Tenants, keys and the audit log in D1. Each change and its audit entry go in one batch (a D1 transaction, so
 * batches never interleave). Where a change is conditional, the statements that depend on it test the same
 * condition on the data first (`INSERT … SELECT … WHERE [NOT] EXISTS`): all of them happen, or none.
 */
export function createD1TenantStore(database: D1Database): TenantStore {
  const db = drizzle(database);
  // drizzle 0.45's D1 batch cannot bind raw `sql` statements, so batches go to D1's own batch.
  const runBatch = (statements: Statement[]) =>
    database.batch(
      statements.map((statement) => {
        const query = statement instanceof SQL ? dialect.sqlToQuery(statement) : statement.toSQL();
        return database.prepare(query.sql).bind(...query.params);
      }),
    );
  const appendAudit = (draft: AuditDraft) => db.insert(auditLog).values(draft);
  const appendAuditWhere = (draft: AuditDraft, condition: SQL) =>
    sql`INSERT INTO audit_log (tenant_id, actor, action, target, details, created_at)
      SELECT ${draft.tenantId}, ${draft.actor}, ${draft.action}, ${draft.target}, ${JSON.stringify(draft.details)},
        ${draft.createdAt}
      WHERE ${condition}`;
  return {
    async createTenant(tenant, audit) {
      await runBatch([db.insert(tenants).values(tenant), appendAudit(audit)]);
    },

    async getTenant(id) {
      const [row] = await db.select().from(tenants).where(eq(tenants.id, id));
      return row;
    },

    async listTenants(query) {
      const t = tenants;
      let anchor;
      if (query.after !== undefined) {
        [anchor] = await db.select().from(t).where(eq(t.id, query.after));
        if (!anchor) return { error: "unknown_after" };
      }
      const page = orderByCreation(t, query.order, anchor);
      const rows = await db
        .select()
        .from(t)
        .where(page.after)
        .orderBy(...page.orderBy)
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },

    async appendAudit(audit) {
      await appendAudit(audit);
    },
    async createApiKey(key, audit) {
      await runBatch([db.insert(apiKeys).values(key), appendAudit(audit)]);
    },

    async ensureTenantKey(tenant, key, audit) {
      await runBatch([
        appendAuditWhere(audit.tenant, sql`NOT EXISTS (SELECT 1 FROM tenants WHERE id = ${tenant.id})`),
        db.insert(tenants).values(tenant).onConflictDoNothing(),
        appendAuditWhere(
          audit.key,
          sql`NOT EXISTS (SELECT 1 FROM api_keys WHERE id = ${key.id} OR prefix = ${key.prefix})`,
        ),
        db.insert(apiKeys).values(key).onConflictDoNothing(),
      ]);
    },

    async findApiKeyByPrefix(prefix) {
      const [row] = await db
        .select({ key: apiKeys, tenantStatus: tenants.status })
        .from(apiKeys)
        .innerJoin(tenants, eq(apiKeys.tenantId, tenants.id))
        .where(eq(apiKeys.prefix, prefix));
      return row && { key: toApiKeyRecord(row.key), tenantStatus: row.tenantStatus };
    },

    async getApiKey(tenantId, keyId) {
      const [row] = await db
        .select()
        .from(apiKeys)
        .where(and(eq(apiKeys.tenantId, tenantId), eq(apiKeys.id, keyId)));
      return row && toApiKeyRecord(row);
    },

    async listApiKeys(tenantId) {
      const rows = await db
        .select()
        .from(apiKeys)
        .where(eq(apiKeys.tenantId, tenantId))
        // rowid is insertion order: keys made within one second still list in the order they were made.
        .orderBy(asc(apiKeys.createdAt), sql`rowid`);
      return rows.map(toApiKeyRecord);
    },

    async rotateApiKey({ old, revokeOldAt, successor, audit }) {
      // Only the batch that finds the old key still unrevoked adds a successor: a concurrent rotation gets none.
      const [inserted] = await runBatch([
        sql`INSERT INTO api_keys
            (id, tenant_id, name, prefix, secret_hash, last4, scopes, created_at, revoked_at, rotated_from)
          SELECT ${successor.id}, ${successor.tenantId}, ${successor.name}, ${successor.prefix},
            ${successor.secretHash}, ${successor.last4}, ${JSON.stringify(successor.scopes)}, ${successor.createdAt},
            NULL, ${old.id}
          WHERE EXISTS (SELECT 1 FROM api_keys
            WHERE tenant_id = ${old.tenantId} AND id = ${old.id} AND revoked_at IS NULL)`,
        db
          .update(apiKeys)
          .set({ revokedAt: revokeOldAt })
          .where(and(eq(apiKeys.tenantId, old.tenantId), eq(apiKeys.id, old.id), isNull(apiKeys.revokedAt))),
        appendAuditWhere(audit, sql`EXISTS (SELECT 1 FROM api_keys WHERE id = ${successor.id})`),
      ]);
      return (inserted?.meta.changes ?? 0) > 0 ? "rotated" : "conflict";
    },

    async revokeApiKey({ key, revokedAt, audit }) {
      const stillActive = sql`tenant_id = ${key.tenantId} AND id = ${key.id}
        AND (revoked_at IS NULL OR revoked_at > ${revokedAt})`;
      await runBatch([
        appendAuditWhere(audit, sql`EXISTS (SELECT 1 FROM api_keys WHERE ${stillActive})`),
        db.update(apiKeys).set({ revokedAt }).where(stillActive),
      ]);
    },

    async listAuditLog(tenantId, query) {
      const t = auditLog;
      const beyond = query.order === "asc" ? gt : lt;
      const rows = await db
        .select()
        .from(t)
        .where(
          and(
            eq(t.tenantId, tenantId),
            query.afterSeq === undefined ? undefined : beyond(t.seq, query.afterSeq),
          ),
        )
        .orderBy(query.order === "asc" ? asc(t.seq) : desc(t.seq))
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },
  };
}
