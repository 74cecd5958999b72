import { describe, expect, it } from "vitest";
import { formatByteSize, formatParameterCount, formatPercent } from "../../infra/cli/run-plan-command.ts";
import {
  countLoraParameters,
  estimateKvCacheBytes,
  planStorage,
} from "../../gpu-nodes/tools/planner/plan-storage.ts";
import { planFromSpec, planSpecSchema } from "../../gpu-nodes/tools/planner/plan-spec.ts";

const parseSpec = (raw: unknown) => planSpecSchema.parse(raw);

describe("the storage arithmetic", () => {
  it("gives Macaron-V1-Venti's published figures: 774.8B vs 2.976T, 74.0 % less", () => {
    const plan = planStorage(
      planFromSpec(parseSpec({ base_params: 744e9, specialists: 4, adapter_params_total: 30.8e9 })),
    );

    // 744e9 + 30.8e9 and 4 × 744e9; 1 − 774.8 / 2976 = 0.7396505…
    expect(plan.mol.parameters).toBe(774_800_000_000);
    expect(plan.replicated.parameters).toBe(2_976_000_000_000);
    expect(plan.reduction).toBeCloseTo(0.73965054, 8);
    expect(formatParameterCount(plan.mol.parameters)).toBe("774.8B");
    expect(formatParameterCount(plan.replicated.parameters)).toBe("2.976T");
    expect(formatPercent(plan.reduction)).toBe("74.0 %");
    // bf16 by default: 2 bytes each; a MoL node holds 1.5496e12 bytes, a replicated node 1.488e12.
    expect(plan.mol.bytes).toBe(1_549_600_000_000);
    expect(plan.node).toEqual({
      kvCacheBytes: 0,
      mol: 1_549_600_000_000,
      replicatedPerNode: 1_488_000_000_000,
      replicatedAllNodes: 5_952_000_000_000,
    });
  });

  it("counts adapters from rank and target modules, the router l0 included", () => {
    // Llama-2-7B shapes, rank 16 on q_proj and v_proj (4096→4096) and down_proj (11008→4096):
    // 16·(4096+4096) + 16·(4096+4096) + 16·(11008+4096) = 131,072 + 131,072 + 241,664 = 503,808 per layer,
    // × 32 layers = 16,121,856 per adapter; 4 specialists + router = 5 adapters = 80,609,280.
    const spec = parseSpec({
      base_params: 6_738_415_616,
      specialists: 4,
      adapter: {
        rank: 16,
        layers: 32,
        target_modules: {
          q_proj: { in: 4096, out: 4096 },
          v_proj: { in: 4096, out: 4096 },
          down_proj: { in: 11008, out: 4096 },
        },
      },
      dtype: "f16",
      kv_cache: { layers: 32, kv_heads: 32, head_dim: 128, context: 4096, slots: 2 },
    });
    const modules = spec.adapter?.target_modules ?? {};
    expect(countLoraParameters({ rank: 16, layers: 32, modules })).toBe(16_121_856);

    const input = planFromSpec(spec);
    expect(input.adapters.map((adapter) => adapter.name)).toEqual([
      "router l0",
      "specialist 1",
      "specialist 2",
      "specialist 3",
      "specialist 4",
    ]);
    const plan = planStorage(input);
    // 6,738,415,616 + 80,609,280; 4 × 6,738,415,616; 1 − 6,819,024,896 / 26,953,662,464 = 0.7470093…
    expect(plan.adapterTotal.parameters).toBe(80_609_280);
    expect(plan.mol.parameters).toBe(6_819_024_896);
    expect(plan.replicated.parameters).toBe(26_953_662_464);
    expect(plan.reduction).toBeCloseTo(0.74700934, 8);
    // KV per slot: 32 layers · 4096 tokens · 32 heads · (128 + 128) · 2 bytes = 2 GiB; two slots = 4 GiB.
    expect(plan.node.kvCacheBytes).toBe(2 * 2 ** 31);
    expect(plan.node.mol).toBe(6_819_024_896 * 2 + 2 ** 32);
    expect(plan.node.replicatedPerNode).toBe(6_738_415_616 * 2 + 2 ** 32);

    const withoutRouter = planStorage(planFromSpec({ ...spec, router_adapter: false }));
    expect(withoutRouter.adapterTotal.parameters).toBe(4 * 16_121_856);
  });

  it("takes bytes_per_param as given, and reports MoL storing more when there is one specialist", () => {
    const plan = planStorage(
      planFromSpec(
        parseSpec({ base_params: 1000, specialists: 1, adapter_params_total: 50, bytes_per_param: 0.5 }),
      ),
    );
    expect(plan.mol).toEqual({ parameters: 1050, bytes: 525 });
    expect(plan.replicated).toEqual({ parameters: 1000, bytes: 500 });
    expect(formatPercent(plan.reduction)).toBe("-5.0 %");
  });

  it("sizes a KV slot from layers, KV heads and head lengths", () => {
    const shape = { layers: 2, kvHeads: 2, keyLength: 16, valueLength: 16, context: 4096 };
    // 2 · 4096 · 2 · 32 · 2 bytes = 1 MiB; at 1024 tokens a quarter of that.
    expect(estimateKvCacheBytes(shape)).toBe(2 ** 20);
    expect(estimateKvCacheBytes(shape, 1024)).toBe(2 ** 18);
  });
});

describe("magnitudes", () => {
  it.each([
    [744e9, "744B"],
    [30.8e9, "30.8B"],
    [339_520, "339.5K"],
    [999_960_000_000, "1T"],
    [12, "12"],
  ])("prints %d parameters as %s", (value, text) => {
    expect(formatParameterCount(value)).toBe(text);
  });

  it.each([
    [1_549_600_000_000, "1.409 TiB"],
    [2 ** 20, "1 MiB"],
    [28_160, "27.5 KiB"],
    [100, "100 B"],
  ])("prints %d bytes as %s", (value, text) => {
    expect(formatByteSize(value)).toBe(text);
  });
});
