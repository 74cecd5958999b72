import { createHash, randomUUID } from "node:crypto";
import { readFile, rename, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const MANIFEST_FILE_NAME = "manifest.json";

export interface FileFingerprint {
  bytes: number;
  sha256: string;
}

export interface TestModelManifest {
  generatorVersion: number;
  /** Fingerprint of the fixture the fixture adapters were derived from; null when there was none. */
  fixture: FileFingerprint | null;
  files: Record<string, FileFingerprint>;
}

export async function fingerprintFile(path: string): Promise<FileFingerprint> {
  const content = await readFile(path);
  return { bytes: content.length, sha256: createHash("sha256").update(content).digest("hex") };
}

export async function readTestModelManifest(outDir: string): Promise<TestModelManifest | undefined> {
  try {
    return JSON.parse(await readFile(join(outDir, MANIFEST_FILE_NAME), "utf8")) as TestModelManifest;
  } catch {
    return undefined;
  }
}

/** Temp-then-rename, so a concurrent reader sees the old manifest or the new one, never half of one. */
export async function writeTestModelManifest(outDir: string, manifest: TestModelManifest): Promise<void> {
  const path = join(outDir, MANIFEST_FILE_NAME);
  const temporaryPath = `${path}.${randomUUID()}.tmp`;
  await writeFile(temporaryPath, `${JSON.stringify(manifest, null, 2)}\n`);
  await rename(temporaryPath, path);
}

/** True when every listed file is on disk with the recorded size and hash. */
export async function isManifestSatisfied(outDir: string, manifest: TestModelManifest): Promise<boolean> {
  for (const [name, expected] of Object.entries(manifest.files)) {
    const path = join(outDir, name);
    const size = await stat(path).then(
      (s) => s.size,
      () => -1,
    );
    if (size !== expected.bytes) return false;
    if ((await fingerprintFile(path)).sha256 !== expected.sha256) return false;
  }
  return true;
}
