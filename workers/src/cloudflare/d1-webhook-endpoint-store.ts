import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { auditLog } from "../../../schema/db/tenant-tables.ts";
import { inboundDeliveries, webhookEndpoints } from "../../../schema/db/webhook-tables.ts";
import type { WebhookEndpointStore } from "../webhooks/webhook-endpoint-store.ts";
import { orderByCreation } from "./order-by-creation.ts";

/** Webhook endpoints and inbound dedupe in D1; each change and its audit entry go in one batch (one transaction). */
export function createD1WebhookEndpointStore(database: D1Database): WebhookEndpointStore {
  const db = drizzle(database);
  const t = webhookEndpoints;
  const ofTenant = (tenantId: string, id: string) => and(eq(t.tenantId, tenantId), eq(t.id, id));
  const read = async (tenantId: string, id: string) => {
    const [row] = await db.select().from(t).where(ofTenant(tenantId, id));
    return row;
  };
  return {
    async create(endpoint, audit) {
      await db.batch([db.insert(t).values(endpoint), db.insert(auditLog).values(audit)]);
    },

    async getById(id) {
      const [row] = await db.select().from(t).where(eq(t.id, id));
      return row;
    },

    async list(tenantId, query) {
      let anchor;
      if (query.after !== undefined) {
        anchor = await read(tenantId, query.after);
        if (!anchor) return { error: "unknown_after" };
      }
      const page = orderByCreation(t, query.order, anchor);
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), page.after))
        .orderBy(...page.orderBy)
        .limit(query.limit + 1);
      return { data: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    },

    async listSubscribed(tenantId, type) {
      const rows = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), eq(t.status, "enabled")));
      return rows.filter((row) => row.events.includes(type));
    },

    async update(tenantId, id, patch, audit) {
      if (!(await read(tenantId, id))) return undefined;
      const change = db.update(t).set(patch).where(ofTenant(tenantId, id));
      if (audit) await db.batch([change, db.insert(auditLog).values(audit)]);
      else await change;
      return read(tenantId, id);
    },

    async rotateSecret(tenantId, id, rotation, audit) {
      const current = await read(tenantId, id);
      if (!current) return undefined;
      await db.batch([
        db
          .update(t)
          .set({
            secret: rotation.secret,
            previousSecret: current.secret,
            previousSecretExpiresAt: rotation.previousSecretExpiresAt,
            updatedAt: rotation.updatedAt,
          })
          // Only over the secret it read: two concurrent rotations cannot both keep the same "previous".
          .where(and(ofTenant(tenantId, id), eq(t.secret, current.secret))),
        db.insert(auditLog).values(audit),
      ]);
      return read(tenantId, id);
    },

    async remove(tenantId, id, audit) {
      if (!(await read(tenantId, id))) return false;
      await db.batch([db.delete(t).where(ofTenant(tenantId, id)), db.insert(auditLog).values(audit)]);
      return true;
    },

    async recordInbound(row) {
      const inserted = await db
        .insert(inboundDeliveries)
        .values(row)
        .onConflictDoNothing()
        .returning({ id: inboundDeliveries.deliveryId });
      return inserted.length > 0;
    },

    async forgetInbound(endpointId, deliveryId) {
      await db
        .delete(inboundDeliveries)
        .where(
          and(eq(inboundDeliveries.endpointId, endpointId), eq(inboundDeliveries.deliveryId, deliveryId)),
        );
    },
  };
}
