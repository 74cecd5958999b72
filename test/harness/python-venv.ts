import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./paths.ts";

const run = promisify(execFile);

export const CLIENTS_REQUIREMENTS = join(REPO_ROOT, "test", "python", "requirements.txt");
const VENV_DIR = join(REPO_ROOT, ".cache", "venv-clients");
/** Holds the sha256 of the requirements the venv was built from: another hash means a rebuild. */
const STAMP = join(VENV_DIR, "requirements.sha256");

/**
 * The Python the real-client tests run: a venv under `.cache/venv-clients` with `test/python/requirements.txt`
 * installed from PyPI, rebuilt from scratch whenever that file changes (pins moved, a package added).
 * Returns the venv's python executable.
 */
export async function ensureClientsVenv(): Promise<string> {
  const python = join(VENV_DIR, "bin", "python");
  const wanted = createHash("sha256")
    .update(await readFile(CLIENTS_REQUIREMENTS))
    .digest("hex");
  const built = await readFile(STAMP, "utf8").catch(() => undefined);
  if (built?.trim() === wanted) return python;
  await rm(VENV_DIR, { recursive: true, force: true });
  await runStep("python3", ["-m", "venv", VENV_DIR]);
  await runStep(python, [
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--no-input",
    "--quiet",
    "-r",
    CLIENTS_REQUIREMENTS,
  ]);
  await writeFile(STAMP, `${wanted}\n`);
  return python;
}

async function runStep(command: string, args: string[]): Promise<void> {
  try {
    await run(command, args, { cwd: REPO_ROOT, maxBuffer: 16 * 1024 * 1024 });
  } catch (error) {
    const { stderr } = error as { stderr?: string };
    const lastLines = (stderr ?? String(error)).trim().split("\n").slice(-5).join(" | ");
    throw new Error(`${command} ${args.slice(0, 3).join(" ")} failed: ${lastLines}`, { cause: error });
  }
}
