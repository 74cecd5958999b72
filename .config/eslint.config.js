import path from "node:path";
import js from "@eslint/js";
import tseslint from "typescript-eslint";

// The config lives in .config/; the project service resolves tsconfigs from the repository root. Each file gets
// its nearest tsconfig.json: workers/** (the Cloudflare adapter included) the workers one, the rest the root one.
const tsconfigRootDir = path.resolve(import.meta.dirname, "..");

export default tseslint.config(
  { ignores: ["node_modules/", ".cache/", ".tmp/", ".wrangler/", "dist/", "**/*.generated.ts"] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // The drizzle-kit configs sit in a dot folder, which tsconfig globs never match.
        projectService: { allowDefaultProject: [".config/*.ts"] },
        tsconfigRootDir,
      },
    },
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/consistent-type-imports": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/switch-exhaustiveness-check": "error",
      // Interpolating counts and flags into messages is idiomatic; objects and nullish values still are not.
      "@typescript-eslint/restrict-template-expressions": [
        "error",
        { allowNumber: true, allowBoolean: true },
      ],
      // Arrow shorthand callbacks that return a void call (`() => void x()`, `(x) => set.add(x)`) are idiomatic;
      // void expressions in every other position are still reported.
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
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
    // Plain scripts are outside every tsconfig: lint them without type information.
    files: ["**/*.mjs", "**/*.cjs", "**/*.js"],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ["**/*.mjs", "**/*.cjs"],
    languageOptions: { globals: { process: "readonly", console: "readonly" } },
  },
  {
    files: ["**/*.cjs"],
    languageOptions: { sourceType: "commonjs", globals: { module: "writable", require: "readonly" } },
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
