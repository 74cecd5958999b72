import type OpenAI from "openai";
import { buildListQuery } from "./build-list-query.ts";
import type { TextSink } from "./cli-io.ts";
import { createListSchema } from "./create-list-schema.ts";
import { formatItems } from "./format-items.ts";
import { itemSchema } from "./item-schema.ts";
import type { ListQuery } from "./parse-cli-args.ts";
import { parseResponseShape } from "./parse-response-shape.ts";

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
