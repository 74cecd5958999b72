import { z } from "zod";
import { BadRequestError, EngineFailureError } from "../../../../schema/wire/v2/index.ts";
import { parseAdapterName } from "../../../../schema/wire/v2/adapter-name.ts";
import { toStrictJsonSchema } from "../../../../schema/tools/json-schema-convert.ts";
import { buildChoiceGrammar, type EngineConstraint, type EngineGenerateRequest } from "../engine.ts";
import type { CompletionBody } from "./completion-stream.ts";
import type { EngineHttpClient } from "./engine-http-client.ts";
import {
  buildSharedBody,
  sendOrFail,
  type AdapterRoute,
  type AdapterToServe,
  type FlavorConnection,
  type FlavorSetup,
  type OpenAiHttpFlavor,
} from "./flavors.ts";
import { readSlotCount } from "./llama-server-slots.ts";
import { pickSlot } from "./tenant-cache.ts";

const loraListSchema = z.array(z.object({ id: z.number().int(), path: z.string() }));
type ServerLora = z.infer<typeof loraListSchema>[number];

const fileNameOf = (path: string): string => path.split(/[\\/]/).pop() ?? path;

async function listLoras(client: EngineHttpClient): Promise<ServerLora[]> {
  const response = await sendOrFail(
    "llama-server",
    () => client.send("/lora-adapters", { method: "GET" }),
    "list LoRA adapters",
  );
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
function findLora(loras: readonly ServerLora[], adapter: AdapterToServe & { path: string }): ServerLora {
  const exact = loras.find((lora) => lora.path === adapter.path);
  if (exact !== undefined) return exact;
  const sameFile = loras.filter((lora) => fileNameOf(lora.path) === fileNameOf(adapter.path));
  const [only] = sameFile;
  if (sameFile.length === 1 && only !== undefined) return only;
  const held = loras.map((lora) => `[${lora.id}] ${lora.path}`).join(", ") || "none";
  throw new BadRequestError(
    `llama-server has no LoRA for adapter "${adapter.label}" (${adapter.path}); it holds: ${held}. ` +
      `It loads LoRAs only at start: restart it with --lora ${adapter.path} --lora-init-without-apply.`,
  );
}

/** llama-server reads a GBNF `grammar` or a `json_schema` it turns into one itself (not both). */
function llamaServerConstraint(constraint: EngineConstraint): Record<string, unknown> {
  switch (constraint.type) {
    case "choice":
      return { grammar: buildChoiceGrammar(constraint.choices) };
    case "json_schema":
      return { json_schema: toStrictJsonSchema(constraint.schema) };
    case "json_object":
      return { json_schema: { type: "object" } };
    case "tools":
      return { json_schema: toStrictJsonSchema(constraint.callSchema) };
    case "grammar":
      return { grammar: constraint.gbnf };
  }
}

/**
 * llama-server loads LoRA files only at start (`--lora`, best with `--lora-init-without-apply`), so loading an
 * adapter here selects one of the server's LoRAs by path (`GET /lora-adapters` lists them with their ids), and
 * unloading only stops selecting it: the server keeps its weights until it restarts.
 *
 * Every request lists every LoRA the server holds with an explicit scale: the chosen one at its scale, all others
 * at 0. A request leaving an id out gets the server's global scale for it (which `--lora` sets to 1 and any
 * client may change with POST /lora-adapters), and `"lora": []` zeroes nothing (llama.cpp PR #10994, #28674).
 * The list is read again on every load, so a server restarted with other LoRAs is seen at the next one.
 *
 * Each request is pinned to a slot (`id_slot`) chosen from its tenant, conversation and adapter label, so a
 * conversation's hops on one adapter meet their own KV prefix again (tenant-cache.ts). The slot count is read once
 * at connect; when the server does not tell it, requests go unpinned and llama-server picks a slot itself.
 */
async function connectLlamaServer(client: EngineHttpClient, setup: FlavorSetup): Promise<FlavorConnection> {
  let loras: ServerLora[] = [];
  const slots = await readSlotCount(client);
  if (slots === undefined) {
    setup.warn(
      "llama-server told no slot count (GET /slots and GET /props failed): requests are not pinned to slots, " +
        "so a conversation may lose its KV prefix between hops",
    );
  }
  const buildBody = (route: AdapterRoute, request: EngineGenerateRequest): CompletionBody => {
    const chosen = route.lora;
    if (chosen !== undefined && !loras.some((lora) => lora.path === chosen.path)) {
      throw new EngineFailureError(
        `llama-server no longer holds LoRA ${chosen.path} (restarted without it?)`,
      );
    }
    const body = buildSharedBody(route, request, request.topK);
    body["lora"] = loras.map((lora) => ({
      id: lora.id,
      scale: lora.path === chosen?.path ? chosen.scale : 0,
    }));
    body["cache_prompt"] = true;
    if (slots !== undefined) {
      const choice = {
        tenantId: request.tenantId,
        slotKey: request.conversationId,
        label: parseAdapterName(request.adapter).label,
      };
      body["id_slot"] = pickSlot(choice, slots);
    }
    if (request.constraint !== undefined) Object.assign(body, llamaServerConstraint(request.constraint));
    return body;
  };
  return {
    async prepare(adapters) {
      const listed = await listLoras(client);
      const routes = adapters.map((adapter): AdapterRoute => {
        const { path } = adapter;
        if (path === undefined) return { model: setup.baseModel };
        const chosen = findLora(listed, { ...adapter, path });
        return { model: setup.baseModel, lora: { path: chosen.path, scale: adapter.scale } };
      });
      loras = listed;
      return routes;
    },
    release: () => Promise.resolve(),
    buildCompletionBody(route, request) {
      // Built synchronously; a throw inside the executor becomes the rejection callers await.
      return new Promise((resolve) => resolve(buildBody(route, request)));
    },
  };
}

export const llamaServerFlavor: OpenAiHttpFlavor = { name: "llama-server", connect: connectLlamaServer };
