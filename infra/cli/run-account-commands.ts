/**
 * `molmesh usage` and `molmesh webhooks`: the tenant's own account, read and changed over the API with its key.
 * Like the list commands they use the openai client's generic verbs, which bring auth, the error envelope and
 * request ids to paths OpenAI's API does not have.
 */
import { z } from "zod";
import type { ListCommandDeps } from "./run-list-commands.ts";
import { runListCommand } from "./run-list-commands.ts";
import { parseResponseShape } from "./mesh-client.ts";
import type { UsageCommand, WebhooksCommand } from "./parse-cli-args.ts";

const USAGE_METRICS = [
  "requests",
  "input_tokens",
  "cached_input_tokens",
  "output_tokens",
  "total_tokens",
] as const;

const usageRowSchema = z.looseObject(
  Object.fromEntries(USAGE_METRICS.map((metric) => [metric, z.number()])) as Record<
    (typeof USAGE_METRICS)[number],
    z.ZodNumber
  >,
);
const usageReportSchema = z.looseObject({ data: z.array(usageRowSchema) });
type UsageRow = z.infer<typeof usageRowSchema>;

/** The group's own columns (`day`, `key_id`, …): whatever a row carries besides the counts and `object`. */
function groupColumns(rows: readonly UsageRow[]): string[] {
  const columns = new Set<string>();
  for (const row of rows) {
    for (const name of Object.keys(row)) {
      if (name !== "object" && !USAGE_METRICS.some((metric) => metric === name)) columns.add(name);
    }
  }
  return [...columns];
}

/** A group value as text: strings as they are, anything else (a number, an object) as JSON. */
const cell = (value: unknown): string =>
  value === undefined || value === null ? "" : typeof value === "string" ? value : JSON.stringify(value);

/** RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled. */
const csvField = (text: string): string => (/[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text);

/** Left-aligned group columns, right-aligned counts, as `ps` and `df` print. */
function formatUsageTable(columns: readonly string[], rows: readonly string[][]): string {
  const widths = columns.map((name, i) => Math.max(name.length, ...rows.map((row) => row[i]?.length ?? 0)));
  const groups = columns.length - USAGE_METRICS.length;
  const line = (cells: readonly string[]) =>
    cells
      .map((text, i) => (i < groups ? text.padEnd(widths[i] ?? 0) : text.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [columns, ...rows].map((cells) => `${line(cells)}\n`).join("");
}

/** `molmesh usage`: `GET /v1/usage` as a table, CSV, or the body as it came. */
export async function runUsageCommand(command: UsageCommand, deps: ListCommandDeps): Promise<number> {
  const query: Record<string, string> = {};
  if (command.groupBy !== undefined) query["group_by"] = command.groupBy;
  if (command.from !== undefined) query["from"] = command.from;
  if (command.to !== undefined) query["to"] = command.to;
  const body = await deps.client.get<unknown>("/usage", { query });
  const report = parseResponseShape(usageReportSchema, body, "usage report");
  if (command.json) {
    deps.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    return 0;
  }
  const groups = groupColumns(report.data);
  const columns = [...groups, ...USAGE_METRICS];
  const rows = report.data.map((row) => columns.map((name) => cell(row[name])));
  if (command.csv) {
    deps.stdout.write([columns, ...rows].map((cells) => `${cells.map(csvField).join(",")}\n`).join(""));
    return 0;
  }
  if (rows.length === 0) deps.stderr.write("no usage in this period\n");
  else deps.stdout.write(formatUsageTable(columns, rows));
  return 0;
}

const webhookEndpointSchema = z.looseObject({
  id: z.string(),
  object: z.literal("webhook_endpoint"),
  url: z.string(),
  events: z.array(z.string()),
  status: z.string(),
  description: z.string().nullish(),
  secret: z.string().optional(),
});
type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;
const deletedSchema = z.looseObject({ id: z.string(), deleted: z.literal(true) });

const formatEndpoint = (endpoint: WebhookEndpoint): string =>
  [endpoint.id, endpoint.status, endpoint.url, endpoint.events.join(","), endpoint.description ?? ""]
    .join("  ")
    .trimEnd();

/** `molmesh webhooks list|create|delete`. */
export async function runWebhooksCommand(command: WebhooksCommand, deps: ListCommandDeps): Promise<number> {
  const { client, stdout, stderr } = deps;
  switch (command.action) {
    case "list":
      return runListCommand(
        {
          path: "/webhook_endpoints",
          query: command,
          json: command.json,
          item: webhookEndpointSchema,
          what: "webhook endpoint",
          format: (endpoints) => endpoints.map((endpoint) => `${formatEndpoint(endpoint)}\n`).join(""),
          nextPage: (lastId) => `molmesh webhooks list --after ${lastId}`,
        },
        deps,
      );
    case "create": {
      const body = await client.post<unknown>("/webhook_endpoints", {
        body: {
          url: command.url,
          events: command.events,
          ...(command.description === undefined ? {} : { description: command.description }),
        },
      });
      const endpoint = parseResponseShape(webhookEndpointSchema, body, "webhook endpoint");
      if (command.json) {
        stdout.write(`${JSON.stringify(endpoint, null, 2)}\n`);
        return 0;
      }
      stdout.write(`${formatEndpoint(endpoint)}\n`);
      if (endpoint.secret !== undefined) {
        stdout.write(`secret: ${endpoint.secret}\n`);
        stderr.write("the signing secret is shown only now: store it to verify deliveries\n");
      }
      return 0;
    }
    case "delete": {
      const body = await client.delete<unknown>(`/webhook_endpoints/${encodeURIComponent(command.id)}`);
      const deleted = parseResponseShape(deletedSchema, body, "deletion");
      stdout.write(command.json ? `${JSON.stringify(deleted, null, 2)}\n` : `deleted ${deleted.id}\n`);
      return 0;
    }
  }
}
