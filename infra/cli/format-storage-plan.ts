import type { StoragePlan } from "../../gpu-nodes/tools/planner/plan-storage.ts";
import { formatByteSize, formatParameterCount, formatPercent } from "./format-magnitude.ts";

export interface PlanReport {
  /** Where the figures came from, for the first line: a spec path or the files read. */
  source: string;
  plan: StoragePlan;
  /** Set for specs: bytes were derived from parameters, so say at what width. */
  dtype?: { name: string; bytesPerParameter: number };
  kvCache?: { slots: number; context: number; bytesPerSlot: number };
}

const LABEL_WIDTH = 19;

function row(label: string, value: string, note: string, valueWidth: number): string {
  return `  ${label.padEnd(LABEL_WIDTH)}${value.padEnd(valueWidth)}  ${note}`;
}

function describeDtype(dtype: PlanReport["dtype"]): string {
  if (dtype === undefined) return "header tensor sizes as stored";
  const width = `${dtype.bytesPerParameter} byte${dtype.bytesPerParameter === 1 ? "" : "s"} per parameter`;
  return `spec; ${dtype.name === "custom" ? width : `${dtype.name}, ${width}`}`;
}

/** The plan for a person: stored parameters of both layouts, the reduction, then memory per node. */
export function formatStoragePlan(report: PlanReport): string {
  const { plan } = report;
  const count = formatParameterCount;
  const lines = [`molmesh plan: ${report.source} (${describeDtype(report.dtype)})`, ""];
  if (plan.adapters.length > 1) {
    lines.push("Adapters");
    for (const adapter of plan.adapters) {
      lines.push(row(adapter.name, count(adapter.parameters), formatByteSize(adapter.bytes), 8));
    }
    lines.push("");
  }
  const specialists = `${plan.specialists} specialist${plan.specialists === 1 ? "" : "s"}`;
  lines.push(
    "Stored parameters",
    row(
      "MoL layout",
      count(plan.mol.parameters),
      `one base ${count(plan.base.parameters)} + adapters ${count(plan.adapterTotal.parameters)}`,
      8,
    ),
    row(
      "Replicated layout",
      count(plan.replicated.parameters),
      `one base per specialist: ${plan.specialists} × ${count(plan.base.parameters)}, adapters merged`,
      8,
    ),
    row(
      "Reduction",
      formatPercent(plan.reduction),
      "of the replicated layout's parameters not stored by MoL",
      8,
    ),
    "",
  );
  const kv = report.kvCache;
  const kvNote =
    kv === undefined || kv.slots === 0
      ? ", no KV cache"
      : `, KV cache ${kv.slots} slot${kv.slots === 1 ? "" : "s"} × ${kv.context} tokens = ${formatByteSize(plan.node.kvCacheBytes)}`;
  lines.push(
    `Memory per GPU node (weights${kvNote})`,
    row(
      "MoL node",
      formatByteSize(plan.node.mol),
      `base once + every adapter; serves all ${specialists}`,
      10,
    ),
    row(
      "Replicated node",
      formatByteSize(plan.node.replicatedPerNode),
      `one merged copy; serves 1 specialist (${plan.specialists} nodes: ${formatByteSize(plan.node.replicatedAllNodes)})`,
      10,
    ),
  );
  return `${lines.join("\n")}\n`;
}
