import type { z } from "zod";
import {
  startTurnRequestSchema,
  statelessTurnRequestSchema,
  type StartTurnRequest,
  type StatelessTurnRequest,
} from "../conversation/conversation-rpc.ts";

/** Paths of the conversation object's `fetch` entry points (turns go over fetch; see conversation-handle.ts). */
export const TURN_PATH = "/turn";
export const STATELESS_TURN_PATH = "/stateless-turn";
/** `?turn=<id>`: the turn's parts from the first, then live (stream resume). */
export const ATTACH_PATH = "/attach";
/**
 * The colo of the Worker that sent a turn (`request.cf.colo`): the conversation object, created near the Worker
 * that first reached it, asks that colo's fleet object where its hops go.
 */
export const COLO_HEADER = "x-molmesh-colo";

export type DecodedTurnRequest =
  | { kind: "stored"; request: StartTurnRequest }
  | { kind: "stateless"; request: StatelessTurnRequest }
  | { kind: "attach"; turnId: string }
  /** 400: the Worker broke the object's contract (not its client's fault); 404: no such entry point. */
  | { kind: "invalid"; status: 400 | 404; message: string };

/** Reads a turn request off the object's `fetch`, validating the body instead of trusting its shape. */
export async function decodeTurnRequest(request: Request): Promise<DecodedTurnRequest> {
  const { pathname, searchParams } = new URL(request.url);
  if (pathname === ATTACH_PATH) return { kind: "attach", turnId: searchParams.get("turn") ?? "" };
  if (pathname !== TURN_PATH && pathname !== STATELESS_TURN_PATH) {
    return { kind: "invalid", status: 404, message: `no turn entry point at ${pathname}` };
  }
  const body: unknown = await request.json().catch(() => undefined);
  if (pathname === TURN_PATH) {
    const parsed = startTurnRequestSchema.safeParse(body);
    return parsed.success ? { kind: "stored", request: parsed.data } : invalid(parsed.error);
  }
  const parsed = statelessTurnRequestSchema.safeParse(body);
  return parsed.success ? { kind: "stateless", request: parsed.data } : invalid(parsed.error);
}

function invalid(error: z.ZodError): DecodedTurnRequest {
  return { kind: "invalid", status: 400, message: `invalid turn request: ${error.message}` };
}
