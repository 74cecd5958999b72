#!/usr/bin/env node
/**
 * Generates nkeys and .creds files for the users of infra/nats/cluster/accounts.conf, and a filled-in copy of that
 * file with one gpu-node block per node id. For dev clusters and for check-configs.sh; in production run it on an
 * offline machine (or use your secret manager / nsc) and ship each .creds file only to its one client.
 *
 *   node infra/nats/generate-dev-credentials.mjs OUT_DIR [NODE_ID ...]     (default node ids: gpu-node-a gpu-node-b)
 *
 * Writes OUT_DIR/accounts.conf (public keys only: safe to deploy to the servers) and OUT_DIR/<user>.creds for
 * edge, admin, sys and every node id (SECRET: the user's nkey seed). Never commit OUT_DIR.
 *
 * The .creds format is the one MOL_NATS_CREDS reads (@nats-io credsAuthenticator: a JWT block and a seed block).
 * With server-config auth the server has no operator to check a JWT against and authenticates the nkey signature
 * alone, so the JWT block holds a marker (verified with nats-server 2.9.10). With operator/JWT auth (nsc), the
 * same variable takes the real .creds file that nsc writes.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { TextDecoder } from "node:util";
import { nkeys } from "@nats-io/nats-core";

const [outDir, ...ids] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node infra/nats/generate-dev-credentials.mjs OUT_DIR [NODE_ID ...]");
  process.exit(2);
}
const nodeIds = ids.length > 0 ? ids : ["gpu-node-a", "gpu-node-b"];
for (const id of nodeIds) {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(id)) {
    console.error(`node id "${id}" is not a valid MOL_NODE_ID (1-64 chars of [A-Za-z0-9_-])`);
    process.exit(2);
  }
}

const template = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "cluster", "accounts.conf"),
  "utf8",
);
const begin = template.indexOf("      # BEGIN gpu-node users");
const end = template.indexOf("      # END gpu-node users");
const firstBlockStart = template.indexOf("      {\n", begin);
const firstBlockEnd = template.indexOf("\n      }\n", firstBlockStart) + "\n      }\n".length;
if (begin < 0 || end < 0 || firstBlockStart < 0 || firstBlockEnd > end) {
  console.error("accounts.conf no longer has the BEGIN/END gpu-node users section this script expects");
  process.exit(1);
}
const nodeBlock = template.slice(firstBlockStart, firstBlockEnd);

mkdirSync(outDir, { recursive: true, mode: 0o700 });
const decoder = new TextDecoder();
const writeCreds = (name) => {
  const kp = nkeys.createUser();
  const creds = [
    "-----BEGIN NATS USER JWT-----",
    "server-config-nkey-user-no-jwt",
    "------END NATS USER JWT------",
    "",
    `molmesh NATS user ${name}: the seed below is a secret, keep this file mode 600 on its one client.`,
    "",
    "-----BEGIN USER NKEY SEED-----",
    decoder.decode(kp.getSeed()),
    "------END USER NKEY SEED------",
    "",
  ].join("\n");
  writeFileSync(join(outDir, `${name}.creds`), creds, { mode: 0o600 });
  return kp.getPublicKey();
};

const nodeBlocks = nodeIds
  .map((id) =>
    nodeBlock.replaceAll("gpu-node-a", id).replace("REPLACE_WITH_GPU_NODE_A_USER_NKEY", writeCreds(id)),
  )
  .join("");
const filled = (template.slice(0, firstBlockStart) + nodeBlocks + template.slice(end))
  .replace("REPLACE_WITH_EDGE_USER_NKEY", writeCreds("edge"))
  .replace("REPLACE_WITH_ADMIN_USER_NKEY", writeCreds("admin"))
  .replace("REPLACE_WITH_SYS_USER_NKEY", writeCreds("sys"));
if (filled.includes("REPLACE_WITH_")) {
  console.error("a placeholder was left in accounts.conf");
  process.exit(1);
}
writeFileSync(join(outDir, "accounts.conf"), filled, { mode: 0o644 });
console.log(
  `wrote ${join(outDir, "accounts.conf")} and .creds for edge, admin, sys, ${nodeIds.join(", ")} in ${outDir}`,
);
