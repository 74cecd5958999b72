import { defineConfig } from "drizzle-kit";

/** The edge's D1 tables: `npx drizzle-kit generate --config .config/drizzle.d1.config.ts`; wrangler applies them. */
export default defineConfig({
  dialect: "sqlite",
  schema: [
    "./workers/src/db/tenant-tables.ts",
    "./workers/src/db/webhook-tables.ts",
    "./workers/src/db/genui-tables.ts",
    "./workers/src/db/usage-tables.ts",
    "./workers/src/db/harness-tables.ts",
  ],
  out: "./workers/src/db/migrations/d1",
});
