import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".cache/", ".tmp/", ".wrangler/", "dist/", "**/*.cjs", "**/*.generated.ts"] },
  js.configs.recommended,
  ...tseslint.configs.strict,
  {
    languageOptions: { parserOptions: { projectService: false } },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["cloudflare:*"], message: "cloudflare:* imports live in workers adapter files only." },
          ],
        },
      ],
    },
  },
  {
    // The Cloudflare adapter is where cloudflare:* imports belong.
    files: ["workers/src/cloudflare/**/*.ts"],
    rules: { "no-restricted-imports": "off" },
  },
  {
    files: ["**/*.mjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  {
    // The shared contract must stay runtime-agnostic: no node:* and no cloudflare:* imports.
    files: ["schema/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        { patterns: [{ group: ["node:*", "cloudflare:*"], message: "schema/ is runtime-agnostic." }] },
      ],
    },
  },
);
