import { z } from "zod";
import { EngineFailureError, UnknownAdapterError } from "../../../../schema/wire/v1/index.ts";
import { computeFingerprint } from "./compute-fingerprint.ts";
import type { EngineHttpClient } from "./engine-http-client.ts";
import type { OpenAiHttpAdapterOption, OpenAiHttpEngineOptions } from "./openai-http-engine-options.ts";
import type { ServedAdapter } from "./served-adapter.ts";

const loraListSchema = z.array(z.object({ id: z.number().int(), path: z.string() }));
type ServerLora = z.infer<typeof loraListSchema>[number];

const fileNameOf = (path: string): string => path.split(/[\\/]/).pop() ?? path;

async function listLoras(client: EngineHttpClient): Promise<ServerLora[]> {
  let response: Response;
  try {
    response = await client.send("/lora-adapters", { method: "GET" });
  } catch (cause) {
    throw new EngineFailureError("could not reach llama-server to list LoRA adapters", { cause });
  }
  if (!response.ok) throw new EngineFailureError(`llama-server /lora-adapters answered ${response.status}`);
  const parsed = loraListSchema.safeParse(await response.json().catch(() => undefined));
  if (!parsed.success) {
    throw new EngineFailureError("llama-server /lora-adapters sent an unexpected body", {
      cause: parsed.error,
    });
  }
  return parsed.data;
}

/** llama-server echoes the --lora argument; accept the same file under another directory spelling if unique. */
function findLora(
  loras: readonly ServerLora[],
  adapter: OpenAiHttpAdapterOption & { path: string },
): ServerLora {
  const exact = loras.find((lora) => lora.path === adapter.path);
  if (exact !== undefined) return exact;
  const sameFile = loras.filter((lora) => fileNameOf(lora.path) === fileNameOf(adapter.path));
  const [only] = sameFile;
  if (sameFile.length === 1 && only !== undefined) return only;
  const held = loras.map((lora) => `[${lora.id}] ${lora.path}`).join(", ") || "none";
  throw new UnknownAdapterError(
    `llama-server has no LoRA for adapter "${adapter.id}" (${adapter.path}); it holds: ${held}. ` +
      `Start it with --lora ${adapter.path} (adapters cannot be added at runtime).`,
  );
}

/**
 * Maps each molmesh adapter to llama-server's LoRA ids. Every request lists all of the server's LoRAs with
 * explicit scales, so nothing depends on the global scales another client may have set via POST.
 */
export async function prepareLlamaServerAdapters(
  client: EngineHttpClient,
  options: Pick<OpenAiHttpEngineOptions, "adapters" | "baseModel">,
): Promise<ServedAdapter[]> {
  const loras = await listLoras(client);
  const baseRevision = await computeFingerprint(["llama-server", options.baseModel]);
  return Promise.all(
    options.adapters.map(async (adapter): Promise<ServedAdapter> => {
      const path = adapter.path;
      const chosen = path === undefined ? undefined : findLora(loras, { ...adapter, path });
      const lora = loras.map((entry) => ({
        id: entry.id,
        scale: entry.id === chosen?.id ? (adapter.scale ?? 1) : 0,
      }));
      const route = { model: options.baseModel, lora };
      if (chosen === undefined) return { id: adapter.id, lora: false, revision: baseRevision, route };
      const revision = await computeFingerprint(["llama-server", options.baseModel, chosen.path]);
      return { id: adapter.id, lora: true, revision, route };
    }),
  );
}
