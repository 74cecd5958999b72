import { and, asc, desc, eq, gt, lt, or, type SQL } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";

/**
 * Keyset pagination by (created_at, id): the rows strictly after `anchor` in `order`, and the ORDER BY that goes
 * with it. Ids break ties between rows created in the same second, so pages never skip or repeat a row.
 */
export function orderByCreation(
  columns: { createdAt: SQLiteColumn; id: SQLiteColumn },
  order: "asc" | "desc",
  anchor: { createdAt: number; id: string } | undefined,
): { after: SQL | undefined; orderBy: SQL[] } {
  const beyond = order === "asc" ? gt : lt;
  const direction = order === "asc" ? asc : desc;
  return {
    after: anchor
      ? or(
          beyond(columns.createdAt, anchor.createdAt),
          and(eq(columns.createdAt, anchor.createdAt), beyond(columns.id, anchor.id)),
        )
      : undefined,
    orderBy: [direction(columns.createdAt), direction(columns.id)],
  };
}
