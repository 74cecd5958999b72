import { z } from "@hono/zod-openapi";
import { harnessDocumentSchema } from "../../../../schema/harness/harness-document.ts";
import { harnessGuardSettingsSchema } from "../../harness-registry/rollout-guard.ts";
import {
  HARNESS_HASH_PATTERN,
  HARNESS_LABEL_PATTERN,
  MAX_HARNESS_DOCUMENT_BYTES,
} from "../../../../schema/harness/harness-registry.ts";
import { pageQueryFields } from "./page-query-fields.ts";

export const MAX_HARNESS_MESSAGE_CHARS = 1024;
export const MAX_LABEL_REASON_CHARS = 1024;

// Built here from the contract's patterns: schemas made before @hono/zod-openapi is loaded have no `.openapi`.
const harnessHashSchema = z
  .string()
  .regex(HARNESS_HASH_PATTERN, "expected a harness hash: sha256: and 64 lower-case hex digits");
const harnessLabelNameSchema = z
  .string()
  .regex(
    HARNESS_LABEL_PATTERN,
    "expected a label name: 1-64 of [a-z0-9._-], starting with a letter or digit",
  );

const hashParam = (name: string) =>
  harnessHashSchema.openapi({
    param: { name, in: "path" },
    example: "sha256:0000000000000000000000000000000000000000000000000000000000000000",
  });

/** `POST /v1/harnesses` and `POST /v1/admin/harnesses`. */
export const createHarnessBodySchema = z
  .strictObject({
    document: harnessDocumentSchema.describe(
      `A whole harness document (docs/harness.md); an unknown key anywhere is refused. At most ${MAX_HARNESS_DOCUMENT_BYTES} bytes of canonical JSON (413 beyond).`,
    ),
    parent: harnessHashSchema.nullable().optional().openapi({
      description: "The version this one was derived from: a hash the caller can see (404 otherwise).",
    }),
    message: z.string().max(MAX_HARNESS_MESSAGE_CHARS).nullable().optional(),
  })
  .openapi("CreateHarnessRequest");

export const harnessHashParamsSchema = z.object({ hash: hashParam("hash") });

export const harnessDiffParamsSchema = z.object({ hash: hashParam("hash"), other: hashParam("other") });

/** `GET /v1/harnesses`: oldest first with `order=asc`; `after` is a hash from a previous page. */
export const listHarnessesQuerySchema = z
  .object({
    after: harnessHashSchema.optional().openapi({
      param: { name: "after", in: "query" },
      description: "A version's hash; the page starts after it.",
    }),
    ...pageQueryFields,
  })
  .openapi("ListHarnessesQuery");

export const harnessLabelParamsSchema = z.object({
  name: harnessLabelNameSchema.openapi({ param: { name: "name", in: "path" }, example: "production" }),
});

/** `PUT /v1/harness-labels/{name}`: where the label points from now on. */
export const putHarnessLabelBodySchema = z
  .strictObject({
    harness: harnessHashSchema,
    canary: z
      .strictObject({
        harness: harnessHashSchema,
        percent: z.int().min(0).max(100).openapi({
          description: "The share of conversations (by a stable hash of tenant and conversation) it takes.",
        }),
      })
      .nullable()
      .optional()
      .openapi({ description: "Absent or null: no canary." }),
    reason: z.string().max(MAX_LABEL_REASON_CHARS).nullable().optional().openapi({
      description: "Why it moved: kept in the label's history.",
    }),
    guard: harnessGuardSettingsSchema.nullable().optional().openapi({
      description:
        "The rollout guard (a sequential test that rolls the canary back by itself when it fails more than production); absent or null: the defaults.",
    }),
  })
  .openapi("PutHarnessLabelRequest");

/** `GET /v1/harness-labels/{name}/history`: newest first by default; `after` is an entry id (`hlm_<seq>`). */
export const labelHistoryQuerySchema = z
  .object({
    after: z
      .string()
      .regex(/^hlm_[1-9][0-9]{0,14}$/, { message: "expected a label move id (hlm_<n>)" })
      .optional()
      .openapi({ param: { name: "after", in: "query" } }),
    ...pageQueryFields,
  })
  .openapi("ListHarnessLabelHistoryQuery");
