import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Engine } from "../../gpu-nodes/src/engine/engine.ts";
import { Admission } from "../../gpu-nodes/src/service/admission.ts";
import { NodeMetrics } from "../../gpu-nodes/src/service/node-metrics.ts";
import { REPO_ROOT } from "../harness/paths.ts";

describe("the Grafana dashboard (infra/grafana/molmesh-node.json)", () => {
  it("queries only metrics a node exports, and every exported metric has a panel", async () => {
    const dashboard = JSON.parse(
      await readFile(join(REPO_ROOT, "infra", "grafana", "molmesh-node.json"), "utf8"),
    ) as { panels: Array<{ targets: Array<{ expr: string }> }> };
    const queried = new Set(
      dashboard.panels
        .flatMap((p) => p.targets.map((t) => t.expr))
        .flatMap((expr) => expr.match(/molmesh_[a-z_]+/g) ?? [])
        .map((name) => name.replace(/_(bucket|count|sum)$/, "")),
    );
    const engine = { snapshot: () => [] } as unknown as Engine;
    const metrics = new NodeMetrics({
      engine,
      admission: new Admission({ maxConcurrent: 1, maxQueued: 0 }),
      nodeId: "n",
    });
    const exported = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name);
    expect([...queried].sort()).toEqual([...exported].sort());
  });
});
