import { z } from "zod";

/** Literal version carried by every message that crosses the edge↔node wire. */
export const WIRE_VERSION = "molmesh.v1" as const;
export type WireVersion = typeof WIRE_VERSION;
export const wireVersionSchema = z.literal(WIRE_VERSION);
