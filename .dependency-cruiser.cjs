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
