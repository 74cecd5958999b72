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
