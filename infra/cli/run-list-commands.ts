import type OpenAI from "openai";
import type { TextSink } from "./cli-io.ts";
import { formatConversations, formatItems } from "./format-turns.ts";
import {
  buildListQuery,
  conversationSchema,
  createListSchema,
  parseResponseShape,
  itemSchema,
} from "./mesh-client.ts";
import type { ListQuery } from "./parse-cli-args.ts";

const conversationListSchema = createListSchema(conversationSchema);

export interface ConversationsCommandDeps {
  client: OpenAI;
  stdout: TextSink;
  stderr: TextSink;
}

/**
 * `GET /v1/conversations` has no method on the openai client (OpenAI's API has no such list), so this goes
 * through the client's generic `get`, which still brings auth, the error envelope and request ids.
 */
export async function runConversationsCommand(
  options: ListQuery & { json: boolean },
  { client, stdout, stderr }: ConversationsCommandDeps,
): Promise<number> {
  const body = await client.get<unknown>("/conversations", { query: buildListQuery(options) });
  const page = parseResponseShape(conversationListSchema, body, "conversation list");
  if (options.json) {
    stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return 0;
  }
  if (page.data.length === 0) stderr.write("no conversations\n");
  stdout.write(formatConversations(page.data));
  // Hints go to stderr so stdout stays one conversation per line for `cut` and `grep`.
  if (page.has_more && typeof page.last_id === "string") {
    stderr.write(`more: molmesh conversations --after ${page.last_id}\n`);
  }
  return 0;
}

const itemListSchema = createListSchema(itemSchema);

export interface ItemsCommandDeps {
  client: OpenAI;
  stdout: TextSink;
  stderr: TextSink;
}

/**
 * The generic `get` rather than `client.conversations.items.list`: that one wraps the body in a page class that
 * keeps `data` but drops `first_id` and hides the rest, and `--json` prints the list exactly as the mesh sent it.
 */
export async function runItemsCommand(
  options: ListQuery & { conversationId: string; json: boolean },
  { client, stdout, stderr }: ItemsCommandDeps,
): Promise<number> {
  const path = `/conversations/${encodeURIComponent(options.conversationId)}/items`;
  const body = await client.get<unknown>(path, { query: buildListQuery(options) });
  const page = parseResponseShape(itemListSchema, body, "item list");
  if (options.json) {
    stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return 0;
  }
  if (page.data.length === 0) stderr.write("no items\n");
  stdout.write(formatItems(page.data));
  if (page.has_more && typeof page.last_id === "string") {
    const order = options.order === undefined ? "" : ` --order ${options.order}`;
    stderr.write(`more: molmesh items ${options.conversationId}${order} --after ${page.last_id}\n`);
  }
  return 0;
}
