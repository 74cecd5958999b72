import { z } from "zod";
import type { EngineHttpClient } from "./engine-http-client.ts";

/** Most slots molmesh believes a server has; a larger figure is a misread, not a server. */
const MAX_SLOTS = 4096;

const slotCount = z.number().int().min(1).max(MAX_SLOTS);
/** `GET /slots`: one object per slot (`--parallel`); 501 when the server runs with `--no-slots`. */
const slotListSchema = z
  .array(z.object({ id: z.number().int().nonnegative() }))
  .min(1)
  .max(MAX_SLOTS);
/** `GET /props`: the server's settings, `total_slots` among them. */
const propsSchema = z.object({ total_slots: slotCount });

async function readJson(client: EngineHttpClient, path: string): Promise<unknown> {
  try {
    const response = await client.send(path, { method: "GET" });
    if (!response.ok) return undefined;
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * How many slots llama-server runs, from `GET /slots` or else `GET /props`; undefined when neither tells (an
 * older build, `--no-slots`, a proxy in front that passes only `/v1`). Never throws: without a count the engine
 * still serves, unpinned.
 */
export async function readSlotCount(client: EngineHttpClient): Promise<number | undefined> {
  const listed = slotListSchema.safeParse(await readJson(client, "/slots"));
  if (listed.success) return listed.data.length;
  const props = propsSchema.safeParse(await readJson(client, "/props"));
  return props.success ? props.data.total_slots : undefined;
}
