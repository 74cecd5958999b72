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
