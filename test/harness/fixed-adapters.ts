import { BadRequestError } from "../../schema/wire/v2/index.ts";
import { formatAdapterName } from "../../schema/wire/v2/adapter-name.ts";
import type { Engine, EngineAdapterInfo } from "../../gpu-nodes/src/engine/engine.ts";
import { HeldAdapters } from "../../gpu-nodes/src/engine/held-adapters.ts";

/** The adapter verbs of a model-free test engine: one revision per label, fixed (loads are refused). */
export function fixedAdapters(
  labels: readonly string[],
  revision: string,
): Pick<Engine, "adapters" | "resolveAdapter" | "loadAdapter" | "unloadAdapter"> & {
  nameOf: (label: string) => string;
} {
  const infos: EngineAdapterInfo[] = labels.map((id) => ({
    id,
    name: formatAdapterName(id, revision),
    revision,
    lora: false,
  }));
  const held = new HeldAdapters<{ info: EngineAdapterInfo }>();
  for (const info of infos) held.add({ info });
  const refuse = () => Promise.reject(new BadRequestError("this test engine's adapters are fixed"));
  return {
    adapters: () => [...infos],
    resolveAdapter: (requested) => held.resolve(requested)?.info,
    loadAdapter: refuse,
    unloadAdapter: refuse,
    nameOf: (label) => formatAdapterName(label, revision),
  };
}
