#!/usr/bin/env node
// Installs what `npm test` / `npm start` need on a fresh clone: npm dependencies and nats-server, and builds the
// `molmesh` bin (dist/molmesh.js).
// Plain Node (no dependencies), so it runs before anything is installed.
import { execSync, spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = (cmd) => execSync(cmd, { cwd: root, stdio: "inherit" });
const has = (bin) => spawnSync("sh", ["-c", `command -v ${bin}`], { stdio: "ignore" }).status === 0;

function npmDepsStale() {
  const marker = join(root, "node_modules", ".package-lock.json");
  if (!existsSync(marker)) return true;
  return statSync(join(root, "package-lock.json")).mtimeMs > statSync(marker).mtimeMs + 1000;
}

if (npmDepsStale()) {
  console.log("[molmesh] installing npm dependencies (npm ci)…");
  run("npm ci --no-audit --no-fund");
}

// The bin is plain JS for plain `node` (`npx molmesh` without tsx); rebuilt each time, it takes about a second.
run("node infra/cli/build-cli.mjs");

if (!has("nats-server")) {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (has("apt-get") && isRoot) {
    console.log("[molmesh] installing nats-server from the OS packages…");
    run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server");
  } else {
    const os = existsSync("/etc/os-release")
      ? readFileSync("/etc/os-release", "utf8").match(/^PRETTY_NAME="?(.*?)"?$/m)?.[1]
      : process.platform;
    console.error(
      `[molmesh] nats-server is not installed and cannot be installed automatically on ${os ?? "this system"}.\n` +
        "  Debian/Ubuntu: sudo apt-get install nats-server   macOS: brew install nats-server\n" +
        "  or download a release from the NATS project and put nats-server on PATH.",
    );
    process.exit(1);
  }
}

// The GenUI tests drive Debian's Chromium through playwright-core (no browser download).
if (!existsSync(process.env.MOL_CHROMIUM_PATH ?? "/usr/bin/chromium")) {
  const isRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (has("apt-get") && isRoot) {
    console.log("[molmesh] installing chromium from the OS packages…");
    run("apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium");
  } else {
    console.error(
      "[molmesh] chromium is not installed (the GenUI tests need it): sudo apt-get install chromium, " +
        "or point MOL_CHROMIUM_PATH at a Chromium binary.",
    );
    process.exit(1);
  }
}
