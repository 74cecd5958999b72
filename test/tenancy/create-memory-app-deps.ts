import type { AppDeps } from "../../workers/src/app/app-deps.ts";
import { authenticateApiKey } from "../../workers/src/tenancy/authenticate-api-key.ts";
import { createMemoryTenantStore } from "./create-memory-tenant-store.ts";

const unused = (): never => {
  throw new Error("not used by these tests");
};

/**
 * The app's deps over an in-memory tenant store, for route tests of the real app: keys authenticate against that
 * store (plus `devApiKey`), ids count up, and every dependency a test does not override throws when called.
 */
export function createMemoryAppDeps(devApiKey: string, overrides: Partial<AppDeps> = {}) {
  const memory = createMemoryTenantStore();
  let next = 0;
  const deps: AppDeps = {
    conversations: unused,
    conversationIndex: { add: unused, remove: unused, list: unused },
    limits: unused,
    readFleetHealth: unused,
    authenticate: (apiKey) => authenticateApiKey(apiKey, { store: memory.store, devApiKey, now: Date.now() }),
    tenantStore: memory.store,
    usage: { query: unused },
    adminToken: undefined,
    webhookEndpoints: {
      create: unused,
      getById: unused,
      list: unused,
      listSubscribed: unused,
      update: unused,
      rotateSecret: unused,
      remove: unused,
      recordInbound: unused,
      forgetInbound: unused,
    },
    webhookDeliveries: unused,
    webhookUrlPolicy: {},
    genuiComponents: { create: unused, get: unused, getForRender: unused },
    genuiSandboxOrigin: undefined,
    harnessRegistry: unusedHarnessRegistry(),
    now: () => Date.now(),
    newId: (prefix) => `${prefix}_${String(++next).padStart(32, "0")}`,
    ...overrides,
  };
  return { memory, deps };
}

/** A harness registry whose every method throws: tests replace the ones they use. */
export function unusedHarnessRegistry(): AppDeps["harnessRegistry"] {
  return {
    putVersion: unused,
    getVersion: unused,
    listVersions: unused,
    getLabel: unused,
    listLabels: unused,
    moveLabel: unused,
    listLabelHistory: unused,
    recordRolloutOutcome: unused,
    recordRolloutFeedback: unused,
    readRolloutCounts: unused,
    rollBackCanary: unused,
  };
}
