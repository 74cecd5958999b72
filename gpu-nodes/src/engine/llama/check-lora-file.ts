import type { GgufFileInfo } from "node-llama-cpp";
import { BadRequestError } from "../../../../schema/wire/v2/index.ts";
import { readGgufFileHeader } from "../../models/gguf/reader.ts";
import type { GgufMetadata, TensorShape } from "../../models/gguf/types.ts";

/** What a LoRA is checked against, and what is read from a LoRA file: GGUF dims are [ne0 (in), ne1 (out)]. */
export interface GgufFacts {
  architecture: string | undefined;
  /** `general.type`: "adapter" for a LoRA, "model" (or absent) for a base. */
  type: string | undefined;
  /** `adapter.type`: "lora". */
  adapterType: string | undefined;
  tensors: ReadonlyMap<string, readonly number[]>;
}

const PAIR = /^(.+)\.lora_([ab])$/;
const TOKEN_EMBEDDING = "token_embd.weight";

/**
 * Why llama.cpp would refuse `lora` on `base`, or undefined when it would load: the checks of llama.cpp's
 * `llama_adapter_lora_init` (src/llama-adapter.cpp), run before loading so the refusal names its reason:
 * node-llama-cpp reports only "Failed to initialize LoRA adapter" and leaves the reason in llama.cpp's log.
 */
export function findLoraMismatch(lora: GgufFacts, base: GgufFacts): string | undefined {
  if (lora.type !== "adapter" || lora.adapterType !== "lora") {
    return `not a LoRA adapter (general.type ${lora.type ?? "absent"}, adapter.type ${lora.adapterType ?? "absent"})`;
  }
  if (lora.architecture !== base.architecture) {
    return `made for architecture ${lora.architecture ?? "(none)"}, the base is ${base.architecture ?? "(none)"}`;
  }
  const pairs = new Map<string, { a?: readonly number[]; b?: readonly number[] }>();
  for (const [name, dims] of lora.tensors) {
    const match = PAIR.exec(name);
    if (!match) return `tensor ${name} is neither a lora_a nor a lora_b`;
    const [, target = "", half] = match;
    pairs.set(target, { ...pairs.get(target), [half === "a" ? "a" : "b"]: dims });
  }
  if (pairs.size === 0) return "it holds no LoRA tensors";
  for (const [target, { a, b }] of pairs) {
    if (!a || !b) return `tensor ${target} has only one of lora_a and lora_b`;
    const weight = base.tensors.get(target);
    if (!weight) return `the base has no tensor ${target} (a LoRA for another base?)`;
    const [aIn, aRank] = a;
    const [bRank, bOut] = b;
    // llama.cpp stores the embedding's pair flipped (see llm_build_inp_embd).
    const fits =
      target === TOKEN_EMBEDDING
        ? weight[0] === bOut && weight[1] === aRank
        : weight[0] === aIn && weight[1] === bOut && aRank === bRank;
    if (!fits) {
      return `tensor ${target} is ${weight.join("×")} in the base, the LoRA's pair is ${a.join("×")} and ${b.join("×")} (a LoRA for another base?)`;
    }
  }
  return undefined;
}

/** The facts of a model node-llama-cpp has loaded (its `fileInfo`). */
export function describeGgufFile(info: GgufFileInfo): GgufFacts {
  const metadata = info.metadata as { general?: { architecture?: string; type?: string } };
  return {
    architecture: metadata.general?.architecture,
    type: metadata.general?.type,
    adapterType: undefined,
    tensors: new Map(
      (info.fullTensorInfo ?? info.tensorInfo ?? []).map((t) => [t.name, t.dimensions.map(Number)]),
    ),
  };
}

/** The facts of a GGUF header read by molmesh's reader (or of one about to be written). */
export function describeGgufHeader(header: {
  metadata: GgufMetadata;
  tensors: readonly TensorShape[];
}): GgufFacts {
  const text = (key: string): string | undefined => {
    const value = header.metadata.get(key);
    return value?.type === "string" ? value.value : undefined;
  };
  return {
    architecture: text("general.architecture"),
    type: text("general.type"),
    adapterType: text("adapter.type"),
    tensors: new Map(header.tensors.map((t) => [t.name, t.dims])),
  };
}

/**
 * Reads the LoRA's header and throws `bad_request` with the reason when it cannot be loaded onto `base`. The
 * header is read with molmesh's own GGUF reader: node-llama-cpp's `readGgufFileInfo` (3.21.1) never settles
 * on a file cut short inside its header.
 */
export async function checkLoraFile(path: string, base: GgufFacts): Promise<void> {
  let lora: GgufFacts;
  try {
    lora = describeGgufHeader(await readGgufFileHeader(path));
  } catch (error) {
    throw new BadRequestError(`LoRA ${path} is not a readable GGUF file: ${String(error)}`, { cause: error });
  }
  const mismatch = findLoraMismatch(lora, base);
  if (mismatch !== undefined) throw new BadRequestError(`LoRA ${path} cannot be loaded: ${mismatch}`);
}
