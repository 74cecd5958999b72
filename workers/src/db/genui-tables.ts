import { index, integer, sqliteTable, text } from "drizzle-orm/sqlite-core";

/** The JSON report a component's validation produced (workers/src/genui/validate-component.ts writes it). */
export interface GenuiReportColumn {
  status: "valid" | "rejected";
  bytes: number;
  findings: { rule: string; message: string; line: number; column: number }[];
  imports: string[];
  validator: string;
}

/**
 * D1: GenUI components that passed validation, per tenant. Rejected ones are never stored. The render capability is
 * a random token kept only as its SHA-256, with an expiry, so a leaked database row does not open the frame.
 */
export const genuiComponents = sqliteTable(
  "genui_components",
  {
    /** `gc_…`. */
    id: text("id").primaryKey(),
    tenantId: text("tenant_id").notNull(),
    source: text("source").notNull(),
    /** CommonJS-shaped output of sucrase, what the frame's compartment evaluates. */
    compiled: text("compiled").notNull(),
    report: text("report", { mode: "json" }).$type<GenuiReportColumn>().notNull(),
    /** The API origin that created it: the only one allowed to embed its frame (CSP frame-ancestors, postMessage). */
    hostOrigin: text("host_origin").notNull(),
    renderTokenHash: text("render_token_hash").notNull(),
    /** Unix seconds. */
    renderTokenExpiresAt: integer("render_token_expires_at").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [index("genui_components_tenant").on(t.tenantId, t.createdAt)],
);

export type GenuiComponentRow = typeof genuiComponents.$inferSelect;
