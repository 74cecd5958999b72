import type { MolHarnessChoice } from "../../../schema/api/mol.ts";
import { harnessDocumentSchema, type HarnessDocument } from "../../../schema/harness/harness-document.ts";
import {
  HARNESS_HASH_PATTERN,
  HARNESS_LABEL_PATTERN,
  PRODUCTION_LABEL,
  pickCanaryArm,
  readCanaryBucket,
} from "../../../schema/harness/harness-registry.ts";
import { IsolateCache } from "../lib/isolate-cache.ts";
import type { HarnessLabel, HarnessRegistryStore, HarnessVersion } from "./harness-registry-store.ts";

/**
 * Which harness a turn runs under: a pin on the request wins, then a pin on the conversation, then the tenant's
 * `production` label, whose canary takes its percent of conversations by a stable hash of (tenant, conversation);
 * with none of them, the built-in default for the served model (the caller's). A pin is a hash the tenant sees or
 * one of its labels (with that label's canary split).
 */

/** How a turn's harness was chosen, as its user message stores it (`mol.harness` less the hash). */
export type HarnessChoice = MolHarnessChoice;

/** A pin's target: the version, and the label and arm it came through (null for a hash). */
export type ResolvedHarnessRef =
  | { ok: true; hash: string; label: string | null; arm: "production" | "canary" | null }
  | { ok: false; error: "harness_not_found" | "harness_label_not_found" | "invalid" };

/** What resolution reads: a tenant's view of versions and labels (cached, see {@link createHarnessRegistryReader}). */
export interface HarnessRegistryReader {
  getVersion(tenantId: string, hash: string): Promise<HarnessVersion | undefined>;
  getLabel(tenantId: string, name: string): Promise<HarnessLabel | undefined>;
}

/** A pin as written (`x-mol-harness`, `metadata.mol_harness`): a hash, a label, or neither (undefined). */
export function readHarnessRefKind(ref: string): "hash" | "label" | undefined {
  if (HARNESS_HASH_PATTERN.test(ref)) return "hash";
  if (HARNESS_LABEL_PATTERN.test(ref)) return "label";
  return undefined;
}

export async function resolveHarnessRef(
  reader: HarnessRegistryReader,
  tenantId: string,
  ref: string,
  conversationKey: string,
): Promise<ResolvedHarnessRef> {
  const kind = readHarnessRefKind(ref);
  if (kind === undefined) return { ok: false, error: "invalid" };
  if (kind === "hash") {
    const version = await reader.getVersion(tenantId, ref);
    return version
      ? { ok: true, hash: version.hash, label: null, arm: null }
      : { ok: false, error: "harness_not_found" };
  }
  const label = await reader.getLabel(tenantId, ref);
  if (!label) return { ok: false, error: "harness_label_not_found" };
  const arm = label.canary
    ? pickCanaryArm(await readCanaryBucket(tenantId, conversationKey), label.canary.percent)
    : "production";
  return {
    ok: true,
    hash: arm === "canary" && label.canary ? label.canary.harness : label.harness,
    label: ref,
    arm,
  };
}

/** The stores a resolver reads through, shared by an isolate's requests and objects. */
export interface HarnessRegistryCaches {
  /** Labels (and their absence) for a short while: a move elsewhere reaches this isolate within the TTL. */
  labels: IsolateCache<HarnessLabel | null>;
  /** Versions the tenant sees: immutable once stored, so only hits are kept. */
  versions: IsolateCache<HarnessVersion>;
  /** Parsed documents by hash. */
  documents: IsolateCache<HarnessDocument>;
}

/** How long a label is read from this isolate's cache; writes through this isolate clear it at once. */
export const HARNESS_LABEL_TTL_MS = 2_000;

export function createHarnessRegistryCaches(now: () => number): HarnessRegistryCaches {
  return {
    labels: new IsolateCache(now, HARNESS_LABEL_TTL_MS, 1_000),
    versions: new IsolateCache(now, 10 * 60_000, 256),
    documents: new IsolateCache(now, 10 * 60_000, 64),
  };
}

/** The store, its label moves clearing this isolate's label cache (the writer sees its move at once). */
export function cacheHarnessRegistry(
  store: HarnessRegistryStore,
  caches: HarnessRegistryCaches,
): HarnessRegistryStore {
  return {
    ...store,
    moveLabel: async (move) => {
      try {
        return await store.moveLabel(move);
      } finally {
        caches.labels.clear();
      }
    },
  };
}

export function createHarnessRegistryReader(
  store: HarnessRegistryStore,
  caches: HarnessRegistryCaches,
): HarnessRegistryReader {
  return {
    async getVersion(tenantId, hash) {
      const key = `${tenantId}\n${hash}`;
      const hit = caches.versions.read(key);
      if (hit) return hit;
      const version = await store.getVersion({ tenantId }, hash);
      if (version) caches.versions.write(key, version);
      return version;
    },
    async getLabel(tenantId, name) {
      const key = `${tenantId}\n${name}`;
      const hit = caches.labels.read(key);
      if (hit !== undefined) return hit ?? undefined;
      const label = await store.getLabel(tenantId, name);
      caches.labels.write(key, label ?? null);
      return label;
    },
  };
}

export interface HarnessChoiceInput {
  tenantId: string;
  /** The conversation (or a stateless turn's slot key): what the canary split hashes. */
  conversationKey: string;
  /** The request's pin (`x-mol-harness`, `metadata.mol_harness`), checked by the Worker before it was accepted. */
  requestPin?: string | undefined;
  /** The conversation's pin (`metadata.mol_harness`, set at creation). */
  conversationPin?: string | undefined;
}

export interface ChosenHarness {
  harness: HarnessDocument;
  harnessHash: string;
  choice: HarnessChoice;
}

/**
 * The registry's harness for a turn, or undefined for the built-in default (no pin and no production label). A
 * conversation pin that no longer resolves, or a stored document this build cannot read, is reported and passed
 * over, never a failed turn.
 */
export function createHarnessChooser(
  reader: HarnessRegistryReader,
  documents: IsolateCache<HarnessDocument>,
  warn: (message: string) => void,
): (input: HarnessChoiceInput) => Promise<ChosenHarness | undefined> {
  const load = async (tenantId: string, hash: string): Promise<HarnessDocument | undefined> => {
    const cached = documents.read(hash);
    if (cached) return cached;
    const version = await reader.getVersion(tenantId, hash);
    if (!version) return undefined;
    const parsed = harnessDocumentSchema.safeParse(JSON.parse(version.document));
    if (!parsed.success) {
      warn(`molmesh: stored harness ${hash} is not a valid document for this build; using the next choice`);
      return undefined;
    }
    documents.write(hash, parsed.data);
    return parsed.data;
  };
  const pick = async (
    input: HarnessChoiceInput,
  ): Promise<{ hash: string; choice: HarnessChoice } | undefined> => {
    const pins = [
      ["request", input.requestPin],
      ["conversation", input.conversationPin],
    ] as const;
    for (const [source, pin] of pins) {
      if (pin === undefined) continue;
      const ref = await resolveHarnessRef(reader, input.tenantId, pin, input.conversationKey);
      if (ref.ok) return { hash: ref.hash, choice: { label: ref.label, arm: ref.arm, source } };
      warn(`molmesh: the ${source}'s harness pin ${pin} does not resolve (${ref.error})`);
    }
    const production = await resolveHarnessRef(
      reader,
      input.tenantId,
      PRODUCTION_LABEL,
      input.conversationKey,
    );
    if (production.ok)
      return {
        hash: production.hash,
        choice: { label: production.label, arm: production.arm, source: "label" },
      };
    return undefined;
  };
  return async (input) => {
    const picked = await pick(input);
    if (!picked) return undefined;
    const harness = await load(input.tenantId, picked.hash);
    return harness ? { harness, harnessHash: picked.hash, choice: picked.choice } : undefined;
  };
}
