import { createHarnessRegistryCaches } from "../harness-registry/choose-turn-harness.ts";

/**
 * This isolate's harness registry caches, shared by the Worker's requests and the conversation objects it hosts: a
 * label moved through this isolate is seen here at once, one moved elsewhere within HARNESS_LABEL_TTL_MS.
 */
export const harnessRegistryCaches = createHarnessRegistryCaches(() => Date.now());
