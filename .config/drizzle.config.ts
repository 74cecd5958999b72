import { defineConfig } from "drizzle-kit";

/** Conversation Durable Object tables: `npx drizzle-kit generate --config .config/drizzle.config.ts`. */
export default defineConfig({
  dialect: "sqlite",
  driver: "durable-sqlite",
  schema: "./workers/src/db/conversation-tables.ts",
  out: "./workers/src/db/migrations/conversation",
});
