import type { ApiKeyScope } from "./api-key-scope.ts";

/** Who a request acts for: the tenant, the key it presented and what that key may do. */
export interface Principal {
  tenantId: string;
  keyId: string;
  scopes: readonly ApiKeyScope[];
}
