import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

export default defineConfig({
  root: fileURLToPath(new URL("..", import.meta.url)),
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/harness/global-setup.ts"],
    // Engines, nats-server and model files are real: give them room, and keep the 2-core CI box unsaturated.
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default", "./test/harness/closing-line-reporter.ts"],
  },
});
