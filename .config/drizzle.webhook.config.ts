import { defineConfig } from "drizzle-kit";

/** Webhook delivery Durable Object tables: `npx drizzle-kit generate --config .config/drizzle.webhook.config.ts`. */
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./schema/db/webhook-queue-tables.ts",
  out: "./schema/db/migrations/webhook",
});
