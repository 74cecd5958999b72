import type OpenAI from "openai";
import type { z } from "zod";
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

export interface ListCommandDeps {
  client: OpenAI;
  stdout: TextSink;
  stderr: TextSink;
}

export interface ListRequest<T extends z.ZodType> {
  path: string;
  query: ListQuery;
  json: boolean;
  item: T;
  /** "conversation", "item": names the list in shape errors and the empty-page note. */
  what: string;
  format: (data: z.infer<T>[]) => string;
  /** The command that shows the next page. */
  nextPage: (lastId: string) => string;
}

/**
 * The generic `get`, which still brings auth, the error envelope and request ids: `GET /v1/conversations` has no
 * method on the openai client (OpenAI's API has no such list), and `client.conversations.items.list` wraps the body
 * in a page class that keeps `data` but drops `first_id` and hides the rest, while `--json` prints the list exactly
 * as the mesh sent it.
 */
export async function runListCommand<T extends z.ZodType>(
  request: ListRequest<T>,
  { client, stdout, stderr }: ListCommandDeps,
): Promise<number> {
  const body = await client.get<unknown>(request.path, { query: buildListQuery(request.query) });
  const page = parseResponseShape(createListSchema(request.item), body, `${request.what} list`);
  if (request.json) {
    stdout.write(`${JSON.stringify(page, null, 2)}\n`);
    return 0;
  }
  if (page.data.length === 0) stderr.write(`no ${request.what}s\n`);
  stdout.write(request.format(page.data));
  // Hints go to stderr so stdout stays one entry per line for `cut` and `grep`.
  if (page.has_more && typeof page.last_id === "string")
    stderr.write(`more: ${request.nextPage(page.last_id)}\n`);
  return 0;
}

/** `molmesh conversations`: the tenant's conversations, a page at a time. */
export function runConversationsCommand(
  options: ListQuery & { json: boolean },
  deps: ListCommandDeps,
): Promise<number> {
  return runListCommand(
    {
      path: "/conversations",
      query: options,
      json: options.json,
      item: conversationSchema,
      what: "conversation",
      format: formatConversations,
      nextPage: (lastId) => `molmesh conversations --after ${lastId}`,
    },
    deps,
  );
}

/** `molmesh items <id>`: one conversation's items in timeline order. */
export function runItemsCommand(
  options: ListQuery & { conversationId: string; json: boolean },
  deps: ListCommandDeps,
): Promise<number> {
  const order = options.order === undefined ? "" : ` --order ${options.order}`;
  return runListCommand(
    {
      path: `/conversations/${encodeURIComponent(options.conversationId)}/items`,
      query: options,
      json: options.json,
      item: itemSchema,
      what: "item",
      format: formatItems,
      nextPage: (lastId) => `molmesh items ${options.conversationId}${order} --after ${lastId}`,
    },
    deps,
  );
}
