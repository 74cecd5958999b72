import type { Context } from "hono";
import type { UsageAttribution } from "../conversation/conversation-rpc.ts";
import type { AppEnv } from "./app-deps.ts";

/** Whose usage a turn is: the key that sent it and the end user it named (`safety_identifier`, else `user`). */
export function readUsageAttribution(c: Context<AppEnv>, endUser: string | undefined): UsageAttribution {
  return { keyId: c.var.principal.keyId, ...(endUser ? { endUser } : {}) };
}
