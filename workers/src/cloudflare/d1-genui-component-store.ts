import { and, eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import { genuiComponents } from "../db/genui-tables.ts";
import type { GenuiComponent, GenuiComponentStore } from "../genui/genui-component-store.ts";

/** GenUI components in D1 (one row each; rejected components never get here). */
export function createD1GenuiComponentStore(database: D1Database): GenuiComponentStore {
  const db = drizzle(database);
  const t = genuiComponents;
  return {
    async create(component) {
      await db.insert(t).values(component);
    },
    async get(tenantId, id) {
      const [row] = await db
        .select()
        .from(t)
        .where(and(eq(t.tenantId, tenantId), eq(t.id, id)));
      return row as GenuiComponent | undefined;
    },
    async getForRender(id) {
      const [row] = await db.select().from(t).where(eq(t.id, id));
      return row as GenuiComponent | undefined;
    },
  };
}
