import {
  GENUI_RENDER_TOKEN_TTL_SECONDS,
  mintRenderToken,
  type GenuiComponent,
  type GenuiComponentStore,
} from "./genui-component-store.ts";
import type { GenuiValidationReport } from "./validate-component.ts";

export interface StoredComponent {
  component: GenuiComponent;
  /** `{apiOrigin}/playground/render/{id}?t={token}`: the only place the token ever appears. */
  renderUrl: string;
}

/**
 * Stores a component that passed validation with a fresh render token, for the API route and for a genui
 * answer alike. `apiOrigin` is the host page's origin: the frame accepts being framed only by it.
 */
export async function storeValidComponent(
  store: GenuiComponentStore,
  input: {
    tenantId: string;
    source: string;
    compiled: string;
    report: GenuiValidationReport;
    apiOrigin: string;
    id: string;
    nowSeconds: number;
  },
): Promise<StoredComponent> {
  const { token, hash } = await mintRenderToken();
  const component: GenuiComponent = {
    id: input.id,
    tenantId: input.tenantId,
    source: input.source,
    compiled: input.compiled,
    report: input.report,
    hostOrigin: input.apiOrigin,
    renderTokenHash: hash,
    renderTokenExpiresAt: input.nowSeconds + GENUI_RENDER_TOKEN_TTL_SECONDS,
    createdAt: input.nowSeconds,
  };
  await store.create(component);
  return { component, renderUrl: `${input.apiOrigin}/playground/render/${component.id}?t=${token}` };
}
