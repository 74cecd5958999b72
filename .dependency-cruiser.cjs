/** Architecture rules: workers -> schema <- gpu-nodes, never sideways, no cycles between modules or folders. */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
    {
      name: "no-folder-cycles",
      comment:
        "Folders form layers too: when folder A imports from folder B, nothing in B may reach back into A.",
      severity: "error",
      scope: "folder",
      from: {},
      to: { circular: true },
    },
    {
      name: "schema-is-a-leaf",
      comment: "schema/ is the shared contract; it depends on no side.",
      severity: "error",
      from: { path: "^schema/" },
      to: { path: "^(workers|gpu-nodes|test)/" },
    },
    {
      name: "edge-does-not-import-gpu-nodes",
      severity: "error",
      from: { path: "^workers/" },
      to: { path: "^(gpu-nodes|test)/" },
    },
    {
      name: "gpu-nodes-do-not-import-edge",
      severity: "error",
      from: { path: "^gpu-nodes/" },
      to: { path: "^(workers|test)/" },
    },
    {
      name: "node-service-does-not-import-tools",
      comment:
        "gpu-nodes/src is what a GPU node runs; the test-model generator and the planner live in gpu-nodes/tools.",
      severity: "error",
      from: { path: "^gpu-nodes/src/" },
      to: { path: "^gpu-nodes/(tools|scripts)/" },
    },
    {
      name: "infra-runs-the-mesh-as-commands",
      comment:
        "infra/ (CLI, local launcher, deploy configs) talks to the edge through its public HTTP API and runs GPU nodes as processes: it imports nothing from workers/ or gpu-nodes/src/ (the model and planner tools it needs are gpu-nodes/tools, the node's own commands).",
      severity: "error",
      from: { path: "^infra/" },
      to: { path: "^(workers|gpu-nodes/src|test)/" },
    },
    {
      name: "one-heartbeat-watch-per-colo",
      comment:
        "The heartbeat bucket is watched by the colo's fleet object alone (one watch per colo, whatever the number of live conversations): only create-fleet-placement.ts watches it, only fleet-object.ts builds that, and nothing else in the edge opens the bucket.",
      severity: "error",
      from: { path: "^workers/", pathNot: "^workers/src/fleet/create-fleet-placement[.]ts$" },
      to: { path: "^workers/src/fleet/watch-fleet[.]ts$" },
    },
    {
      name: "fleet-placement-lives-in-the-fleet-object",
      severity: "error",
      from: { path: "^workers/", pathNot: "^workers/src/cloudflare/fleet-object[.]ts$" },
      to: { path: "^workers/src/fleet/create-fleet-placement[.]ts$" },
    },
    {
      name: "only-the-watch-opens-the-bucket",
      severity: "error",
      from: { path: "^workers/", pathNot: "^workers/src/fleet/watch-fleet[.]ts$" },
      to: { path: "node_modules/@nats-io/kv/" },
    },
    {
      name: "placement-in-one-place",
      comment:
        "Where a hop goes is decided in workers/src/fleet (filters, scorers, picker in choose-node.ts); callers ask a HopPlacement and never rank nodes themselves.",
      severity: "error",
      from: { path: "^workers/", pathNot: "^workers/src/fleet/" },
      to: { path: "^workers/src/fleet/choose-node[.]ts$", dependencyTypesNot: ["type-only"] },
    },
    {
      name: "schema-is-the-contract-only",
      comment:
        "schema/ holds the wire, harness and public API contracts. Storage (drizzle tables) and transport (the NATS client) belong to the side that uses them.",
      severity: "error",
      from: { path: "^schema/" },
      to: {
        path: "node_modules/(drizzle-orm|drizzle-kit|@nats-io|hono|@hono|node-llama-cpp|@opentelemetry)/",
      },
    },
    {
      name: "schema-is-runtime-agnostic",
      severity: "error",
      from: { path: "^schema/" },
      to: { dependencyTypes: ["core"] },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    exclude: { path: "(\\.cache|\\.tmp)" },
  },
};
