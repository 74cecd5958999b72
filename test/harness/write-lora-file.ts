/**
 * Writes a generated LoRA for a base GGUF: `node --import tsx test/harness/write-lora-file.ts <base.gguf>
 * <out.gguf> <label> <seed> <rank>`. A process of its own, so a test that measures its own memory does not
 * carry the generator's garbage (tens of MB of tensors, freed whenever V8 likes).
 */
import { readGgufFileHeader } from "../../gpu-nodes/src/models/gguf/reader.ts";
import { writeGgufFile } from "../../gpu-nodes/src/models/gguf/writer.ts";
import { buildLoraAdapter } from "../../gpu-nodes/tools/test-models/lora-adapter.ts";

const [basePath, outPath, label, seed, rank] = process.argv.slice(2);
if (!basePath || !outPath || !label || !seed || !rank) throw new Error("usage: see the header");
const base = await readGgufFileHeader(basePath);
await writeGgufFile(outPath, buildLoraAdapter({ base, label, seed: Number(seed), rank: Number(rank) }));
