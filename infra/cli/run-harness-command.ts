/**
 * `molmesh harness`: the harness registry over the public API (/v1/harnesses, /v1/harness-labels), with the
 * tenant's key. The openai client's generic verbs bring auth, the error envelope and request ids, as for the
 * account commands. The server checks every document and label; the CLI only reads the file and prints.
 */
import { readFile } from "node:fs/promises";
import { z } from "zod";
import { parseResponseShape, createListSchema, buildListQuery } from "./mesh-client.ts";
import type { ListCommandDeps } from "./run-list-commands.ts";
import { UsageError } from "./cli-option-values.ts";
import type { HarnessCommand } from "./parse-harness-args.ts";

const versionSchema = z.looseObject({
  id: z.string(),
  object: z.literal("harness"),
  hash: z.string(),
  scope: z.string(),
  parent: z.string().nullable(),
  message: z.string().nullable(),
  bytes: z.number(),
  created_by: z.string(),
  created_at: z.number(),
  document: z.unknown().optional(),
});

const targetFields = {
  harness: z.string(),
  canary: z.looseObject({ harness: z.string(), percent: z.number() }).nullable(),
};
const targetSchema = z.looseObject(targetFields);
type LabelTarget = z.infer<typeof targetSchema>;

const labelSchema = z.looseObject({
  object: z.literal("harness.label"),
  name: z.string(),
  ...targetFields,
  revision: z.number(),
  updated_by: z.string(),
  updated_at: z.number(),
});
type HarnessLabel = z.infer<typeof labelSchema>;

const moveSchema = z.looseObject({
  id: z.string(),
  object: z.literal("harness.label.move"),
  revision: z.number(),
  from: targetSchema.nullable(),
  to: targetSchema,
  reason: z.string().nullable(),
  actor: z.string(),
  created_at: z.number(),
});
type LabelMove = z.infer<typeof moveSchema>;

const diffSchema = z.looseObject({
  object: z.literal("harness.diff"),
  from: z.string(),
  to: z.string(),
  patch: z.array(z.looseObject({ op: z.string(), path: z.string(), value: z.unknown().optional() })),
});

const tallySchema = z.looseObject({
  turns: z.number(),
  failures: z.number(),
  categories: z.record(z.string(), z.number()),
});
type ArmTally = z.infer<typeof tallySchema>;

const guardSchema = z.looseObject({
  object: z.literal("harness.label.guard"),
  label: z.string(),
  ...targetFields,
  settings: z.record(z.string(), z.unknown()),
  counts: z.looseObject({ production: tallySchema, canary: tallySchema }).nullable(),
  statistic: z
    .looseObject({
      llr: z.number(),
      boundary: z.number(),
      p0: z.number(),
      p1: z.number(),
      roll_back: z.boolean(),
    })
    .nullable(),
});
type GuardState = z.infer<typeof guardSchema>;

/** An arm's line: turns, failed turns, and the categories that have any (`check_failed 2, feedback_negative 1`). */
const formatTally = (arm: string, tally: ArmTally): string => {
  const categories = Object.entries(tally.categories)
    .filter(([, count]) => count > 0)
    .map(([category, count]) => `${category} ${count}`);
  return [`${arm.padEnd(10)} ${tally.failures}/${tally.turns} failed`, ...categories].join(", ");
};

const formatGuard = (guard: GuardState): string => {
  const settings = Object.entries(guard.settings)
    .map(([key, value]) => `${key} ${JSON.stringify(value)}`)
    .join(", ");
  const lines = [`${guard.label} → ${formatTarget(guard)}`, `settings   ${settings}`];
  if (guard.counts === null || guard.statistic === null)
    return `${lines.join("\n")}\nno canary: nothing to watch\n`;
  const { llr, boundary, p0, p1, roll_back: rollBack } = guard.statistic;
  lines.push(
    formatTally("production", guard.counts.production),
    formatTally("canary", guard.counts.canary),
    `sprt       llr ${llr.toFixed(3)} / boundary ${boundary.toFixed(3)}, p0 ${p0.toFixed(3)}, p1 ${p1.toFixed(3)}` +
      (rollBack ? ", roll back" : ", keep"),
  );
  return `${lines.join("\n")}\n`;
};

/** Unix seconds as an ISO time without milliseconds. */
const isoTime = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(".000Z", "Z");

/** `sha256:…` shortened to its first 12 hex digits, as `git log --oneline` shortens a commit. */
const shortHash = (hash: string): string => (hash.startsWith("sha256:") ? hash.slice(7, 19) : hash);

const formatTarget = (target: LabelTarget): string =>
  target.canary === null
    ? shortHash(target.harness)
    : `${shortHash(target.harness)} + canary ${shortHash(target.canary.harness)} ${target.canary.percent}%`;

const formatLabel = (label: HarnessLabel): string =>
  [
    `${label.name} → ${label.harness}`,
    ...(label.canary === null ? [] : [`canary ${label.canary.harness} ${label.canary.percent}%`]),
    `revision ${label.revision}`,
  ].join("  ");

const formatMove = (move: LabelMove): string =>
  [
    move.id,
    `r${move.revision}`,
    isoTime(move.created_at),
    move.actor,
    `${move.from === null ? "(none)" : formatTarget(move.from)} → ${formatTarget(move.to)}`,
    move.reason ?? "",
  ]
    .join("  ")
    .trimEnd();

/** A patch operation as one line: `replace /router/maxTokens 64`. */
const formatOperation = (op: { op: string; path: string; value?: unknown }): string =>
  op.value === undefined ? `${op.op} ${op.path}` : `${op.op} ${op.path} ${JSON.stringify(op.value)}`;

/** A file that is missing or not JSON is the caller's mistake (exit 2); the document itself the server checks. */
async function readDocumentFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error: unknown) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(
      `cannot read ${path}${code === "ENOENT" ? ": no such file" : `: ${code}`}`,
      "harness",
    );
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error: unknown) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`, "harness");
  }
}

const labelPath = (name: string) => `/harness-labels/${encodeURIComponent(name)}`;

/** `molmesh harness push|show|diff|label|history|rollback|guard`. */
export async function runHarnessCommand(command: HarnessCommand, deps: ListCommandDeps): Promise<number> {
  const { client, stdout, stderr } = deps;
  const print = (value: unknown, text: string) => {
    stdout.write(command.json ? `${JSON.stringify(value, null, 2)}\n` : text);
    return 0;
  };
  switch (command.action) {
    case "push": {
      const document = await readDocumentFile(command.file);
      const body = await client.post<unknown>("/harnesses", {
        body: {
          document,
          ...(command.parent === undefined ? {} : { parent: command.parent }),
          ...(command.message === undefined ? {} : { message: command.message }),
        },
      });
      const version = parseResponseShape(versionSchema, body, "harness version");
      // The hash alone on stdout, so `h=$(molmesh harness push f.json)` works.
      return print(version, `${version.hash}\n`);
    }
    case "show": {
      const body = await client.get<unknown>(`/harnesses/${command.hash}`);
      const version = parseResponseShape(versionSchema, body, "harness version");
      const header = [
        `hash     ${version.hash}`,
        `scope    ${version.scope}`,
        `parent   ${version.parent ?? "(none)"}`,
        `message  ${version.message ?? ""}`.trimEnd(),
        `bytes    ${version.bytes}`,
        `created  ${isoTime(version.created_at)} by ${version.created_by}`,
      ];
      return print(version, `${header.join("\n")}\n\n${JSON.stringify(version.document, null, 2)}\n`);
    }
    case "diff": {
      const body = await client.get<unknown>(`/harnesses/${command.from}/diff/${command.to}`);
      const diff = parseResponseShape(diffSchema, body, "harness diff");
      if (!command.json && diff.patch.length === 0) stderr.write("the documents are the same\n");
      return print(diff, diff.patch.map((op) => `${formatOperation(op)}\n`).join(""));
    }
    case "label": {
      const body = await client.put<unknown>(labelPath(command.label), {
        body: {
          harness: command.hash,
          canary:
            command.canary === undefined
              ? null
              : { harness: command.canary.hash, percent: command.canary.percent },
          ...(command.reason === undefined ? {} : { reason: command.reason }),
        },
      });
      const label = parseResponseShape(labelSchema, body, "harness label");
      return print(label, `${formatLabel(label)}\n`);
    }
    case "history": {
      const body = await client.get<unknown>(`${labelPath(command.label)}/history`, {
        query: buildListQuery(command),
      });
      const page = parseResponseShape(createListSchema(moveSchema), body, "label history");
      if (command.json) return print(page, "");
      stdout.write(page.data.map((move) => `${formatMove(move)}\n`).join(""));
      if (page.has_more && typeof page.last_id === "string")
        stderr.write(`more: molmesh harness history ${command.label} --after ${page.last_id}\n`);
      return 0;
    }
    case "rollback":
      return runRollback(command, deps);
    case "guard": {
      const body = await client.get<unknown>(`${labelPath(command.label)}/guard`);
      const guard = parseResponseShape(guardSchema, body, "harness guard");
      return print(guard, formatGuard(guard));
    }
  }
}

/**
 * Back to where the label pointed before its latest move: the newest history entry's `from` (harness and canary
 * both), put as a new move with the reason `rollback` (and the caller's reason after it), so the history keeps
 * both moves. A second rollback undoes the first, as `kubectl rollout undo` does. The registry has no rollback
 * endpoint, so this is a read and a PUT: a move by someone else in between is not detected.
 */
async function runRollback(
  command: Extract<HarnessCommand, { action: "rollback" }>,
  { client, stdout }: ListCommandDeps,
): Promise<number> {
  const body = await client.get<unknown>(`${labelPath(command.label)}/history`, { query: { limit: 1 } });
  const page = parseResponseShape(createListSchema(moveSchema), body, "label history");
  const latest = page.data[0];
  if (latest === undefined || latest.from === null) {
    throw new Error(`label ${command.label} has no previous harness to roll back to (it has moved once)`);
  }
  const previous = latest.from;
  const moved = await client.put<unknown>(labelPath(command.label), {
    body: {
      harness: previous.harness,
      canary:
        previous.canary === null
          ? null
          : { harness: previous.canary.harness, percent: previous.canary.percent },
      reason: command.reason === undefined ? "rollback" : `rollback: ${command.reason}`,
    },
  });
  const label = parseResponseShape(labelSchema, moved, "harness label");
  stdout.write(
    command.json
      ? `${JSON.stringify(label, null, 2)}\n`
      : `${formatLabel(label)}  (rolled back from ${formatTarget(latest.to)})\n`,
  );
  return 0;
}
