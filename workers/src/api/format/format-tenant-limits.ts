import type { TenantLimitSettings } from "../../limits/tenant-limits.ts";

/** A tenant's limits in force, in the API's snake_case. */
export function formatTenantLimits(tenantId: string, limits: TenantLimitSettings) {
  return {
    object: "tenant.limits",
    tenant_id: tenantId,
    requests_per_minute: limits.requestsPerMinute,
    tokens_per_minute: limits.tokensPerMinute,
    monthly_tokens: limits.monthlyTokens,
  };
}
