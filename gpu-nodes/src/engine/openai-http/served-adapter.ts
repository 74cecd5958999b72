import type { AdapterId } from "../../../../schema/wire/v1/index.ts";

/** One llama-server LoRA and the scale a request gives it. */
export interface LoraScale {
  id: number;
  scale: number;
}

/** How a request reaches one molmesh adapter on the engine server, resolved once at init. */
export interface AdapterRoute {
  /** The OpenAI `model` field: the LoRA name on vLLM, the base model otherwise. */
  model: string;
  /** llama-server only: every LoRA the server holds, all at 0 but the chosen one. */
  lora?: readonly LoraScale[];
}

export interface ServedAdapter {
  id: AdapterId;
  lora: boolean;
  revision: string;
  route: AdapterRoute;
}
