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
      name: "infra-reaches-the-edge-over-http",
      comment:
        "infra/ (CLI, local launcher, NATS checks) talks to the edge through its public HTTP API and to the nodes through schema/wire; it imports nothing from workers/.",
      severity: "error",
      from: { path: "^infra/" },
      to: { path: "^workers/" },
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
    exclude: { path: "(node_modules|\\.cache|\\.tmp)" },
  },
};
