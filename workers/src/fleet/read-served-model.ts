import type { ServedModelProfile } from "../../../schema/harness/default-harness.ts";
import type { NodeStatus } from "../../../schema/wire/v2/index.ts";

/**
 * The model the views are rendered and budgeted for, from the heartbeats of the nodes that serve `adapters`.
 * A mesh serves one base model, so their chat formats agree; their slot contexts may not, and a view must fit
 * whichever node a hop lands on, so the smallest one counts. Undefined before any such node has beaten (or
 * when only nodes of earlier builds, which do not say, are live): the caller keeps its default.
 */
export function readServedModel(
  nodes: readonly NodeStatus[],
  adapters: readonly string[],
): ServedModelProfile | undefined {
  const serving = nodes.filter(
    (node) => node.servedModel && node.adapters.some((adapter) => adapters.includes(adapter.id)),
  );
  const first = serving[0]?.servedModel;
  if (!first) return undefined;
  const contextTokens = Math.min(...serving.map((node) => node.servedModel?.contextTokens ?? Infinity));
  return { family: first.templateFamily, contextTokens };
}
