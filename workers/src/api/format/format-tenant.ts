import type { TenantLimitSettings } from "../../limits/tenant-limits.ts";
import type { Tenant } from "../../tenancy/tenant-store.ts";

export interface TenantObject {
  id: string;
  object: "tenant";
  name: string;
  status: Tenant["status"];
  created_at: number;
}

export function formatTenant(tenant: Tenant): TenantObject {
  return {
    id: tenant.id,
    object: "tenant",
    name: tenant.name,
    status: tenant.status,
    created_at: tenant.createdAt,
  };
}

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
