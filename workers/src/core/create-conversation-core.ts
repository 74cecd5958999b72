import { hashHarness } from "../../../schema/harness/content-hash.ts";
import { DEFAULT_HARNESS } from "../../../schema/harness/default-harness.ts";
import { createHarnessResolver, parseHarnessOverlay } from "../../../schema/harness/harness-config.ts";
import type { EdgeConfig } from "../config/edge-config.ts";
import { readServedModel } from "../fleet/read-served-model.ts";
import type { HopPlacement } from "../fleet/hop-placement.ts";
import type { GenuiComponentStore } from "../genui/genui-component-store.ts";
import type { GenerateClient } from "../nats/generate-client.ts";
import type { TurnLoopDeps, TurnOutbox } from "../turns/turn-loop.ts";
import { ConversationCore, type ConversationCoreStore } from "./conversation-core.ts";
import { buildTurnId } from "../conversation/item-id.ts";

/** What a runtime provides a conversation: its storage, its transport and placement, and the stores it writes. */
export interface ConversationPorts {
  store: ConversationCoreStore;
  /** Where the conversation's webhook events go first. */
  outbox: TurnOutbox;
  client: GenerateClient;
  placement: HopPlacement;
  genuiComponents: GenuiComponentStore;
  /** The harness registry's choice per turn (pins, the production label); absent: the default always. */
  chooseHarness?: TurnLoopDeps["chooseHarness"];
  meter: TurnLoopDeps["meter"];
  usage: NonNullable<TurnLoopDeps["usage"]>;
  /** The labels' rollout guard, told each turn a label chose; absent: no guard. */
  rollout?: TurnLoopDeps["rollout"];
  /** Unix ms. */
  now: () => number;
  /** A fresh random id (32 hex digits). */
  randomId: () => string;
  /** Where problems that do not fail a request are reported (an invalid MOL_HARNESS). */
  warn: (message: string) => void;
}

/**
 * The composition root of a conversation: its core, built from the edge's config and the runtime's ports. The
 * harness is the built-in default with MOL_HARNESS laid over it, for the chat format and context of the nodes that
 * serve the mesh's adapters; before any heartbeat, the plain format on 4,096 tokens.
 */
export function createConversationCore(config: EdgeConfig, ports: ConversationPorts): ConversationCore {
  const harnessFor = createHarnessResolver({
    overlay: readHarnessOverlay(config.harness, ports.warn),
    onInvalid: (error) => ports.warn(`molmesh: ${error.message}; using the default harness`),
  });
  const loop: TurnLoopDeps = {
    client: ports.client,
    placement: ports.placement,
    hopTimeouts: config.hopTimeouts,
    harness: DEFAULT_HARNESS,
    harnessHash: hashHarness(DEFAULT_HARNESS),
    resolveHarness: async () => {
      const served = readServedModel(await ports.placement.nodes(), [
        DEFAULT_HARNESS.router.adapter,
        ...DEFAULT_HARNESS.router.labels,
      ]);
      return harnessFor(served ?? { family: "plain", contextTokens: DEFAULT_HARNESS.contextTokens });
    },
    ...(ports.chooseHarness ? { chooseHarness: ports.chooseHarness } : {}),
    now: ports.now,
    newTurnId: (conversationId) => buildTurnId(conversationId, ports.randomId()),
    genui: {
      components: ports.genuiComponents,
      newId: (prefix) => `${prefix}_${ports.randomId()}`,
      now: ports.now,
    },
    meter: ports.meter,
    usage: ports.usage,
    ...(ports.rollout ? { rollout: ports.rollout } : {}),
  };
  return new ConversationCore({ store: ports.store, outbox: ports.outbox, loop });
}

/** An invalid MOL_HARNESS is reported and ignored: the edge keeps serving with the per-model defaults. */
function readHarnessOverlay(
  text: string | undefined,
  warn: (message: string) => void,
): ReturnType<typeof parseHarnessOverlay> {
  try {
    return parseHarnessOverlay(text);
  } catch (error) {
    warn(`molmesh: ${String(error)}; using the default harness`);
    return undefined;
  }
}
