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
 * The work is done by generate-dev-credentials.ts, which the tests import too (test/nats/); this file stays so
 * the command keeps working under plain `node`, which cannot load TypeScript itself: tsx (a dev dependency, as
 * for every other script here) loads the module for this one import.
 */
import { tsImport } from "tsx/esm/api";

const { DEFAULT_DEV_NODE_IDS, generateDevCredentials, readAccountsTemplate, writeDevCredentials } =
  await tsImport("./generate-dev-credentials.ts", import.meta.url);

const [outDir, ...ids] = process.argv.slice(2);
if (!outDir) {
  console.error("usage: node infra/nats/generate-dev-credentials.mjs OUT_DIR [NODE_ID ...]");
  process.exit(2);
}
const nodeIds = ids.length > 0 ? ids : DEFAULT_DEV_NODE_IDS;
try {
  await writeDevCredentials(outDir, generateDevCredentials(await readAccountsTemplate(), nodeIds));
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(2);
}
console.log(
  `wrote ${outDir}/accounts.conf and .creds for edge, admin, sys, ${nodeIds.join(", ")} in ${outDir}`,
);
