import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./paths.ts";

const run = promisify(execFile);

export const CLIENTS_REQUIREMENTS = join(REPO_ROOT, "test", "python", "requirements.txt");
export const SCHEMATHESIS_REQUIREMENTS = join(REPO_ROOT, "test", "python", "schemathesis-requirements.txt");

/**
 * The Python the real-client tests run: a venv under `.cache/venv-clients` with `test/python/requirements.txt`
 * installed from PyPI (see {@link ensurePythonVenv}). Returns the venv's python executable.
 */
export async function ensureClientsVenv(): Promise<string> {
  return ensurePythonVenv(CLIENTS_REQUIREMENTS, join(REPO_ROOT, ".cache", "venv-clients"));
}

/**
 * Schemathesis for the contract test: a venv outside the repository (`~/.cache/molmesh/venv-schemathesis`, kept
 * across checkouts and worktrees) with `test/python/schemathesis-requirements.txt`. Returns its bin directory.
 */
export async function ensureSchemathesisVenv(): Promise<string> {
  const venv = join(homedir(), ".cache", "molmesh", "venv-schemathesis");
  const python = await ensurePythonVenv(SCHEMATHESIS_REQUIREMENTS, venv);
  return join(python, "..");
}

/**
 * A venv at `venvDir` with `requirements` installed from PyPI, rebuilt from scratch whenever that file changes
 * (pins moved, a package added): the venv keeps the sha256 of the file it was built from. Returns its python.
 */
export async function ensurePythonVenv(requirements: string, venvDir: string): Promise<string> {
  const python = join(venvDir, "bin", "python");
  const stamp = join(venvDir, "requirements.sha256");
  const wanted = createHash("sha256")
    .update(await readFile(requirements))
    .digest("hex");
  const built = await readFile(stamp, "utf8").catch(() => undefined);
  if (built?.trim() === wanted) return python;
  await rm(venvDir, { recursive: true, force: true });
  await runStep("python3", ["-m", "venv", venvDir]);
  await runStep(python, [
    "-m",
    "pip",
    "install",
    "--disable-pip-version-check",
    "--no-input",
    "--quiet",
    "-r",
    requirements,
  ]);
  await writeFile(stamp, `${wanted}\n`);
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
