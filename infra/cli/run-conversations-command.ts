import type OpenAI from "openai";
import { buildListQuery } from "./build-list-query.ts";
import type { TextSink } from "./cli-io.ts";
import { conversationSchema } from "./conversation-schema.ts";
import { createListSchema } from "./create-list-schema.ts";
import { formatConversations } from "./format-conversations.ts";
import type { ListQuery } from "./parse-cli-args.ts";
import { parseResponseShape } from "./parse-response-shape.ts";

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
