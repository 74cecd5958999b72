import { ROUTED_MODEL } from "../schemas/resolve-model.ts";
import type { ListObject } from "./format-item-list.ts";

export interface ModelObject {
  id: string;
  object: "model";
  created: number;
  owned_by: string;
}

/** `mol` first (it routes), then one `mol:<label>` per specialist that can be forced. */
export function formatModelList(
  labels: readonly string[],
  options: { created?: number; ownedBy?: string } = {},
): Omit<ListObject<ModelObject>, "first_id" | "last_id" | "has_more"> {
  const model = (id: string): ModelObject => ({
    id,
    object: "model",
    created: options.created ?? 0,
    owned_by: options.ownedBy ?? "molmesh",
  });
  return {
    object: "list",
    data: [model(ROUTED_MODEL), ...labels.map((label) => model(`${ROUTED_MODEL}:${label}`))],
  };
}
