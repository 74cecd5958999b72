import type { AuditEntry } from "../../tenancy/tenant-store.ts";

export interface AuditEntryObject {
  id: string;
  object: "audit_log.entry";
  tenant_id: string;
  actor: string;
  action: string;
  target: string;
  details: Record<string, unknown>;
  created_at: number;
}

const AUDIT_ID = /^aud_([1-9][0-9]{0,14})$/;

/** The entry's sequence number behind an `aud_<seq>` id, or undefined for anything else. */
export function readAuditSeq(id: string): number | undefined {
  const digits = AUDIT_ID.exec(id)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

export function formatAuditEntry(entry: AuditEntry): AuditEntryObject {
  return {
    id: `aud_${entry.seq}`,
    object: "audit_log.entry",
    tenant_id: entry.tenantId,
    actor: entry.actor,
    action: entry.action,
    target: entry.target,
    details: entry.details,
    created_at: entry.createdAt,
  };
}
