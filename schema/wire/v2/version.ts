import { z } from "zod";

/** Literal version carried by every message that crosses the edge↔node wire. */
export const WIRE_VERSION = "molmesh.v2" as const;
export type WireVersion = typeof WIRE_VERSION;
export const wireVersionSchema = z.literal(WIRE_VERSION);

/**
 * Any wire version's literal, as heartbeats of nodes of other builds carry it: a fleet is upgraded node by node, so
 * an edge reads every node's beat, and places hops only on nodes whose `wireVersions` include its own.
 */
export const anyWireVersionSchema = z
  .string()
  .regex(/^molmesh\.v[1-9][0-9]{0,2}$/, "a wire version: molmesh.vN");
