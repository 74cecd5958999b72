import { defineConfig } from "drizzle-kit";

/** Webhook delivery Durable Object tables: `npx drizzle-kit generate --config .config/drizzle.webhook.config.ts`. */
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./workers/src/db/webhook-queue-tables.ts",
  out: "./workers/src/db/migrations/webhook",
});
