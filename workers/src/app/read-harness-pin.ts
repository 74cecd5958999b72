import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "../api/errors/api-error.ts";
import { createNotFoundError } from "../api/errors/request-errors.ts";
import { HARNESS_PIN_KEY } from "../conversation/conversation-rpc.ts";
import { HARNESS_HASH_PATTERN, HARNESS_LABEL_PATTERN } from "../../../schema/harness/harness-registry.ts";
import { readHarnessRefKind } from "../harness-registry/choose-turn-harness.ts";
import type { HarnessRegistryStore } from "../harness-registry/harness-registry-store.ts";
import type { AppEnv } from "./app-deps.ts";

/** A request's harness pin: this header, else `metadata.mol_harness`. */
export const HARNESS_PIN_HEADER = "x-mol-harness";

/** The pin header as a turn route declares it (so it is in the OpenAPI document). */
export const harnessPinHeaderFields = {
  [HARNESS_PIN_HEADER]: z
    .string()
    .regex(new RegExp(`${HARNESS_HASH_PATTERN.source}|${HARNESS_LABEL_PATTERN.source}`), {
      message: "expected a harness hash (sha256: and 64 hex digits) or a label name",
    })
    .optional()
    .openapi({
      param: { name: HARNESS_PIN_HEADER, in: "header" },
      description:
        "Runs this turn under a harness version the tenant sees (its hash) or one of its labels (404 otherwise); wins over `metadata.mol_harness` and the production label.",
      example: "production",
    }),
};

/**
 * The request's pin, checked against the tenant's registry before anything is stored: a hash it sees or one of
 * its labels. A malformed pin is 400, one that names nothing the tenant sees (another tenant's version too) 404.
 */
export async function readHarnessPin(
  c: Context<AppEnv>,
  metadata: Readonly<Record<string, string>> | null | undefined,
): Promise<string | undefined> {
  const header = c.req.header(HARNESS_PIN_HEADER);
  const pin = header ?? metadata?.[HARNESS_PIN_KEY];
  if (pin === undefined) return undefined;
  const param = header === undefined ? `metadata.${HARNESS_PIN_KEY}` : HARNESS_PIN_HEADER;
  await checkHarnessPin(c.var.deps.harnessRegistry, c.var.tenantId, pin, param);
  return pin;
}

export async function checkHarnessPin(
  registry: HarnessRegistryStore,
  tenantId: string,
  pin: string,
  param: string,
): Promise<void> {
  const kind = readHarnessRefKind(pin);
  if (kind === undefined)
    throw new ApiError({
      status: 400,
      type: "invalid_request_error",
      code: "invalid_value",
      param,
      message: `Invalid '${param}': expected a harness hash (sha256: and 64 hex digits) or a label name.`,
    });
  if (kind === "hash") {
    if (!(await registry.getVersion({ tenantId }, pin))) throw createNotFoundError("harness", pin, param);
  } else if (!(await registry.getLabel(tenantId, pin)))
    throw createNotFoundError("harness_label", pin, param);
}
