import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { nkeys } from "@nats-io/nats-core";

/** The production accounts file, with placeholder nkeys and one gpu-node user block to repeat per node. */
export const ACCOUNTS_TEMPLATE_PATH = join(
  dirname(fileURLToPath(import.meta.url)),
  "cluster",
  "accounts.conf",
);
export const DEFAULT_DEV_NODE_IDS: readonly string[] = ["gpu-node-a", "gpu-node-b"];

export interface DevCredentials {
  /** accounts.conf with every placeholder replaced by a fresh public key: safe to deploy to the servers. */
  accountsConf: string;
  /** `.creds` text (SECRET: holds the nkey seed) per user: edge, admin, sys and every node id. */
  creds: ReadonlyMap<string, string>;
}

const NODE_ID = /^[A-Za-z0-9_-]{1,64}$/;
const BEGIN_MARK = "      # BEGIN gpu-node users";
const END_MARK = "      # END gpu-node users";
const BLOCK_OPEN = "      {\n";
const BLOCK_CLOSE = "\n      }\n";
// The first node block is written for this id; its copies get theirs by substitution.
const TEMPLATE_NODE_ID = "gpu-node-a";

/**
 * Fills the accounts template with fresh nkeys: one gpu-node user block per node id (copied from the first
 * block, so every node gets exactly the production permissions) and keys for edge, admin and sys. Keys are new
 * on every call. With server-config nkey users the server has no operator to check a JWT against and verifies
 * the nkey signature alone, so the `.creds` JWT block holds a marker (accepted by nats-server 2.9.10); with
 * operator/JWT auth, `nsc` writes real ones.
 */
export function generateDevCredentials(
  template: string,
  nodeIds: readonly string[] = DEFAULT_DEV_NODE_IDS,
): DevCredentials {
  if (nodeIds.length === 0) throw new Error("at least one node id is needed");
  for (const id of nodeIds) {
    if (!NODE_ID.test(id)) {
      throw new Error(`node id "${id}" is not a valid MOL_NODE_ID (1-64 chars of [A-Za-z0-9_-])`);
    }
  }
  if (new Set(nodeIds).size !== nodeIds.length) throw new Error("node ids must be unique");

  const begin = template.indexOf(BEGIN_MARK);
  const end = template.indexOf(END_MARK);
  const firstBlockStart = template.indexOf(BLOCK_OPEN, begin);
  const firstBlockEnd = template.indexOf(BLOCK_CLOSE, firstBlockStart) + BLOCK_CLOSE.length;
  if (begin < 0 || end < 0 || firstBlockStart < 0 || firstBlockEnd > end) {
    throw new Error(
      "accounts.conf no longer has the BEGIN/END gpu-node users section this generator expects",
    );
  }
  const nodeBlock = template.slice(firstBlockStart, firstBlockEnd);

  const creds = new Map<string, string>();
  const newUser = (name: string): string => {
    const kp = nkeys.createUser();
    creds.set(name, formatCreds(name, new TextDecoder().decode(kp.getSeed())));
    return kp.getPublicKey();
  };

  const nodeBlocks = nodeIds
    .map((id) =>
      nodeBlock.replaceAll(TEMPLATE_NODE_ID, id).replace("REPLACE_WITH_GPU_NODE_A_USER_NKEY", newUser(id)),
    )
    .join("");
  const accountsConf = (template.slice(0, firstBlockStart) + nodeBlocks + template.slice(end))
    .replace("REPLACE_WITH_EDGE_USER_NKEY", newUser("edge"))
    .replace("REPLACE_WITH_ADMIN_USER_NKEY", newUser("admin"))
    .replace("REPLACE_WITH_SYS_USER_NKEY", newUser("sys"));
  if (accountsConf.includes("REPLACE_WITH_")) throw new Error("a placeholder was left in accounts.conf");
  return { accountsConf, creds };
}

/** Reads the production template from {@link ACCOUNTS_TEMPLATE_PATH}. */
export async function readAccountsTemplate(): Promise<string> {
  return await readFile(ACCOUNTS_TEMPLATE_PATH, "utf8");
}

/** Writes `accounts.conf` (mode 644) and `<user>.creds` (mode 600) into `outDir` (mode 700). */
export async function writeDevCredentials(outDir: string, credentials: DevCredentials): Promise<void> {
  await mkdir(outDir, { recursive: true, mode: 0o700 });
  for (const [user, text] of credentials.creds) {
    await writeFile(join(outDir, `${user}.creds`), text, { mode: 0o600 });
  }
  await writeFile(join(outDir, "accounts.conf"), credentials.accountsConf, { mode: 0o644 });
}

/** The `.creds` layout that @nats-io's credsAuthenticator (and so MOL_NATS_CREDS) reads. */
function formatCreds(user: string, seed: string): string {
  return [
    "-----BEGIN NATS USER JWT-----",
    "server-config-nkey-user-no-jwt",
    "------END NATS USER JWT------",
    "",
    `molmesh NATS user ${user}: the seed below is a secret, keep this file mode 600 on its one client.`,
    "",
    "-----BEGIN USER NKEY SEED-----",
    seed,
    "------END USER NKEY SEED------",
    "",
  ].join("\n");
}
