/** What a layout keeps on disk and in GPU memory. */
export interface StoredWeights {
  parameters: number;
  bytes: number;
}

export interface NamedWeights extends StoredWeights {
  name: string;
}

export interface KvCacheBudget {
  bytesPerSlot: number;
  slots: number;
  /** Tokens per slot the estimate assumes. */
  context: number;
}

export interface StoragePlanInput {
  base: StoredWeights;
  /** Every adapter the MoL node stores, the router included when it is one. */
  adapters: readonly NamedWeights[];
  /** How many full merged copies the replicated layout needs: one per specialist. */
  specialists: number;
  kvCache?: KvCacheBudget;
}

export interface StoragePlan {
  specialists: number;
  base: StoredWeights;
  adapters: readonly NamedWeights[];
  adapterTotal: StoredWeights;
  /** One base plus every adapter. */
  mol: StoredWeights;
  /** One base per specialist, each with its adapter merged in (merging adds no parameters). */
  replicated: StoredWeights;
  /** Share of the replicated layout's parameters the MoL layout does not store; negative when it stores more. */
  reduction: number;
  node: {
    kvCacheBytes: number;
    /** A MoL node: the base once, every adapter, and its KV slots; it serves every specialist. */
    mol: number;
    /** A replicated node holds one merged copy and serves one specialist… */
    replicatedPerNode: number;
    /** …so serving all of them takes `specialists` such nodes. */
    replicatedAllNodes: number;
  };
}

function sumWeights(items: readonly StoredWeights[]): StoredWeights {
  return {
    parameters: items.reduce((sum, item) => sum + item.parameters, 0),
    bytes: items.reduce((sum, item) => sum + item.bytes, 0),
  };
}

/** The MoL layout against the replicated-base layout, in parameters and in bytes per GPU node. */
export function planStorage(input: StoragePlanInput): StoragePlan {
  const { base, specialists } = input;
  if (!Number.isInteger(specialists) || specialists < 1) {
    throw new Error(`specialists must be a whole number ≥ 1, got ${specialists}`);
  }
  const adapterTotal = sumWeights(input.adapters);
  const mol = sumWeights([base, adapterTotal]);
  const replicated = { parameters: specialists * base.parameters, bytes: specialists * base.bytes };
  const kvCacheBytes = input.kvCache === undefined ? 0 : input.kvCache.bytesPerSlot * input.kvCache.slots;
  const replicatedPerNode = base.bytes + kvCacheBytes;
  return {
    specialists,
    base,
    adapters: input.adapters,
    adapterTotal,
    mol,
    replicated,
    reduction: 1 - mol.parameters / replicated.parameters,
    node: {
      kvCacheBytes,
      mol: mol.bytes + kvCacheBytes,
      replicatedPerNode,
      replicatedAllNodes: specialists * replicatedPerNode,
    },
  };
}

export interface LoraModuleShape {
  /** Input features of the projection the adapter wraps. */
  in: number;
  out: number;
}

export interface LoraShape {
  rank: number;
  layers: number;
  /** Target modules of one layer, e.g. q_proj: {in: 4096, out: 4096}. */
  modules: Readonly<Record<string, LoraModuleShape>>;
}

/** A is rank×in and B is out×rank, so each wrapped projection adds rank·(in + out) parameters. */
export function countLoraModuleParameters(rank: number, module: LoraModuleShape): number {
  return rank * (module.in + module.out);
}

/** Parameters of one adapter: every target module in every layer. */
export function countLoraParameters(shape: LoraShape): number {
  const perLayer = Object.values(shape.modules).reduce(
    (sum, module) => sum + countLoraModuleParameters(shape.rank, module),
    0,
  );
  return shape.layers * perLayer;
}

export interface KvCacheShape {
  layers: number;
  kvHeads: number;
  keyLength: number;
  valueLength: number;
  /** The model's trained context, the default slot size. */
  context: number;
}

/** llama.cpp's default cache type is f16. */
export const DEFAULT_KV_BYTES_PER_VALUE = 2;

/** Every layer keeps a key and a value vector per KV head for each token of the slot. */
export function estimateKvCacheBytes(
  shape: KvCacheShape,
  context: number = shape.context,
  bytesPerValue: number = DEFAULT_KV_BYTES_PER_VALUE,
): number {
  return shape.layers * context * shape.kvHeads * (shape.keyLength + shape.valueLength) * bytesPerValue;
}
