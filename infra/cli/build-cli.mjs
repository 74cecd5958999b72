#!/usr/bin/env node
// Builds the `molmesh` bin (package.json "bin") into dist/molmesh.js: one ESM file plain `node` runs, no tsx.
// Plain Node + esbuild, because it runs in the install step (.ci/ensure-install.mjs) right after `npm ci`.
//   node infra/cli/build-cli.mjs [--outfile path/molmesh.js]
import { readFileSync } from "node:fs";
import { chmod, readFile } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const flag = process.argv.indexOf("--outfile");
const outfile = flag === -1 ? join(root, "dist", "molmesh.js") : process.argv[flag + 1];
if (outfile === undefined) throw new Error("--outfile needs a path");
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

/**
 * A bundled module would see the bundle's `import.meta.url`, and paths it resolves from there (the repo's .cache,
 * found as "../../.." from its own folder) would point elsewhere. Each module gets its own source URL back,
 * computed from the bundle's location at run time, so the built bin and the sources find the same files.
 */
const sourceMetaUrl = {
  name: "source-import-meta-url",
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8");
      if (!source.includes("import.meta.url")) return undefined;
      const fromBundle = relative(dirname(outfile), args.path).split("\\").join("/");
      const url = `new URL(${JSON.stringify(fromBundle)}, import.meta.url).href`;
      return { contents: source.replaceAll("import.meta.url", url), loader: "ts" };
    });
  },
};

await build({
  entryPoints: [join(root, "infra", "cli", "molmesh.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  banner: { js: "#!/usr/bin/env node" },
  // Runtime dependencies are installed next to the bin; what only devDependencies has (the openai client) is
  // bundled, so a production install (`npm install --omit=dev`) still runs the CLI.
  external: Object.keys(pkg.dependencies ?? {}),
  plugins: [sourceMetaUrl],
  logLevel: "warning",
});
// A bin is run by its shebang; npm sets the mode when it links a package's bins, a checkout has to have it already.
await chmod(outfile, 0o755);
