/** Architecture rules: workers -> schema <- gpu-nodes, never sideways, no cycles. */
module.exports = {
  forbidden: [
    { name: "no-circular", severity: "error", from: {}, to: { circular: true } },
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
