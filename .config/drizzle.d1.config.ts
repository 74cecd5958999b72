import { defineConfig } from "drizzle-kit";

/** The edge's D1 tables: `npx drizzle-kit generate --config .config/drizzle.d1.config.ts`; wrangler applies them. */
export default defineConfig({
  dialect: "sqlite",
  schema: [
    "./schema/db/tenant-tables.ts",
    "./schema/db/webhook-tables.ts",
    "./schema/db/genui-tables.ts",
    "./schema/db/usage-tables.ts",
  ],
  out: "./schema/db/migrations/d1",
});
