import { and, eq, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { auditLog } from "../db/tenant-tables.ts";
import { inboundDeliveries, webhookEndpoints, type InboundConfig } from "../db/webhook-tables.ts";
import { PLAIN_SECRETS, type SecretSealer } from "../webhooks/create-secret-sealer.ts";
import type { WebhookEndpoint, WebhookEndpointStore } from "../webhooks/webhook-endpoint-store.ts";
import { orderByCreation } from "./order-by-creation.ts";

/**
 * How long an accepted inbound delivery id is remembered. Standard Webhooks and Slack replays are already refused by
 * their 5-minute timestamps; GitHub signs no timestamp and lets people redeliver for 3 days, so a week covers it.
 */
export const INBOUND_DEDUPE_RETENTION_SECONDS = 7 * 24 * 3600;

/**
 * Webhook endpoints and inbound dedupe in D1; each change and its audit entry go in one batch (one transaction).
 * Signing secrets go through `sealer` on their way in and out, so D1 holds them encrypted when a key is configured.
 */
export function createD1WebhookEndpointStore(
  database: D1Database,
  sealer: SecretSealer = PLAIN_SECRETS,
): WebhookEndpointStore {
  const db = drizzle(database);
  const t = webhookEndpoints;
  const ofTenant = (tenantId: string, id: string) => and(eq(t.tenantId, tenantId), eq(t.id, id));
  const readRow = async (tenantId: string, id: string) => {
    const [row] = await db.select().from(t).where(ofTenant(tenantId, id));
    return row;
  };
  const sealInbound = async (inbound: InboundConfig | null | undefined) =>
    inbound ? { ...inbound, secret: await sealer.seal(inbound.secret) } : inbound;
  const open = async (row: WebhookEndpoint | undefined): Promise<WebhookEndpoint | undefined> =>
    row && {
      ...row,
      secret: await sealer.open(row.secret),
      previousSecret: row.previousSecret === null ? null : await sealer.open(row.previousSecret),
      inbound: row.inbound ? { ...row.inbound, secret: await sealer.open(row.inbound.secret) } : null,
    };
  const openAll = (rows: WebhookEndpoint[]) => Promise.all(rows.map(async (row) => (await open(row)) ?? row));
  return {
    async create(endpoint, audit) {
      const sealed = {
        ...endpoint,
        secret: await sealer.seal(endpoint.secret),
        inbound: (await sealInbound(endpoint.inbound)) ?? null,
      };
      await db.batch([db.insert(t).values(sealed), db.insert(auditLog).values(audit)]);
    },

    async getById(id) {
      const [row] = await db.select().from(t).where(eq(t.id, id));
      return open(row);
    },

    async list(tenantId, query) {
      let anchor;
      if (query.after !== undefined) {
        anchor = await readRow(tenantId, query.after);
        if (!anchor) return { error: "unknown_after" };
      }
      const page = orderByCreation(t, query.order, anchor);
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), page.after))
        .orderBy(...page.orderBy)
        .limit(query.limit + 1);
      return { data: await openAll(rows.slice(0, query.limit)), hasMore: rows.length > query.limit };
    },

    async listSubscribed(tenantId, type) {
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), eq(t.status, "enabled")));
      return openAll(rows.filter((row) => row.events.includes(type)));
    },

    async update(tenantId, id, patch, audit) {
      if (!(await readRow(tenantId, id))) return undefined;
      const sealed =
        patch.inbound === undefined ? patch : { ...patch, inbound: await sealInbound(patch.inbound) };
      const change = db.update(t).set(sealed).where(ofTenant(tenantId, id));
      if (audit) await db.batch([change, db.insert(auditLog).values(audit)]);
      else await change;
      return open(await readRow(tenantId, id));
    },

    async rotateSecret(tenantId, id, rotation, audit) {
      const current = await readRow(tenantId, id);
      if (!current) return undefined;
      await db.batch([
        db
          .update(t)
          .set({
            secret: await sealer.seal(rotation.secret),
            previousSecret: current.secret,
            previousSecretExpiresAt: rotation.previousSecretExpiresAt,
            updatedAt: rotation.updatedAt,
          })
          // Only over the secret it read: two concurrent rotations cannot both keep the same "previous".
          .where(and(ofTenant(tenantId, id), eq(t.secret, current.secret))),
        db.insert(auditLog).values(audit),
      ]);
      return open(await readRow(tenantId, id));
    },

    async remove(tenantId, id, audit) {
      if (!(await readRow(tenantId, id))) return false;
      await db.batch([db.delete(t).where(ofTenant(tenantId, id)), db.insert(auditLog).values(audit)]);
      return true;
    },

    async recordInbound(row) {
      const d = inboundDeliveries;
      const expired = row.receivedAt - INBOUND_DEDUPE_RETENTION_SECONDS;
      const [, inserted] = await db.batch([
        db.delete(d).where(and(eq(d.endpointId, row.endpointId), lt(d.receivedAt, expired))),
        db.insert(d).values(row).onConflictDoNothing().returning({ id: d.deliveryId }),
      ]);
      return inserted.length > 0;
    },

    async forgetInbound(endpointId, deliveryId) {
      const d = inboundDeliveries;
      await db.delete(d).where(and(eq(d.endpointId, endpointId), eq(d.deliveryId, deliveryId)));
    },
  };
}
