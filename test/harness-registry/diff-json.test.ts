import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_HARNESS, buildDefaultHarness } from "../../schema/harness/default-harness.ts";
import {
  diffJson,
  type JsonPatchOperation,
  type JsonValue,
} from "../../workers/src/harness-registry/diff-json.ts";
import { PROPERTY_LIMITS } from "../views/property-limits.ts";

/** RFC 6902 `add`/`remove`/`replace` as the RFC states them, independently of the diff, to check it by. */
function applyPatch(document: JsonValue, patch: readonly JsonPatchOperation[]): JsonValue {
  let root = structuredClone(document);
  for (const operation of patch) {
    if (operation.path === "") {
      if (operation.op === "remove") throw new Error("cannot remove the root");
      root = structuredClone(operation.value);
      continue;
    }
    const tokens = operation.path
      .slice(1)
      .split("/")
      .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
    const last = tokens.pop() as string;
    let parent: JsonValue = root;
    for (const token of tokens) {
      parent = Array.isArray(parent)
        ? (parent[Number(token)] as JsonValue)
        : ((parent as Record<string, JsonValue>)[token] as JsonValue);
    }
    if (Array.isArray(parent)) {
      const index = last === "-" ? parent.length : Number(last);
      if (!(index >= 0 && index <= parent.length)) throw new Error(`bad index ${operation.path}`);
      if (operation.op === "add") parent.splice(index, 0, structuredClone(operation.value));
      else if (index >= parent.length) throw new Error(`no element at ${operation.path}`);
      else if (operation.op === "remove") parent.splice(index, 1);
      else parent[index] = structuredClone(operation.value);
    } else {
      const object = parent as Record<string, JsonValue>;
      if (operation.op !== "add" && !Object.hasOwn(object, last))
        throw new Error(`no member at ${operation.path}`);
      if (operation.op === "remove") Reflect.deleteProperty(object, last);
      else object[last] = structuredClone(operation.value);
    }
  }
  return root;
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value)) as JsonValue;

describe("diffJson (RFC 6902)", () => {
  it("turns one harness into another, and names what changed", () => {
    const a = json(DEFAULT_HARNESS);
    const b = json({
      ...DEFAULT_HARNESS,
      router: { ...DEFAULT_HARNESS.router, minConfidence: 0.4 },
      compaction: { ...DEFAULT_HARNESS.compaction, keepFullFraction: 0.45 },
    });
    const patch = diffJson(a, b);
    // Deterministic (canonical key order in, the same patch out), whatever the order of the operations.
    expect(diffJson(b, a).length).toBe(2);
    expect([...patch].sort((x, y) => x.path.localeCompare(y.path))).toEqual([
      { op: "replace", path: "/compaction/keepFullFraction", value: 0.45 },
      { op: "add", path: "/router/minConfidence", value: 0.4 },
    ]);
    expect(applyPatch(a, patch)).toEqual(b);
    expect(diffJson(a, a)).toEqual([]);
    const other = json(buildDefaultHarness({ family: "llama3", contextTokens: 8192 }));
    expect(applyPatch(a, diffJson(a, other))).toEqual(other);
  });

  it("escapes ~ and / in keys (RFC 6901)", () => {
    const from = json({ "a/b": 1, "c~d": [1, 2] });
    const patch = diffJson(from, { "a/b": 2, "c~d": [1] });
    expect(patch).toHaveLength(2);
    expect(patch).toContainEqual({ op: "replace", path: "/a~1b", value: 2 });
    expect(patch).toContainEqual({ op: "remove", path: "/c~0d/1" });
    expect(applyPatch(from, patch)).toEqual({ "a/b": 2, "c~d": [1] });
  });

  // Documents are objects: the root is an object on both sides, anything below it any JSON value.
  it("gives a patch that applies to the first document and yields the second, for any two JSON objects", () => {
    // No `__proto__` keys: the strict harness schema admits none, and an assignment of one sets a prototype.
    const document = fc
      .dictionary(fc.string(), fc.jsonValue())
      .filter((value) => !JSON.stringify(value).includes('"__proto__"'));
    fc.assert(
      fc.property(document, document, (a, b) => {
        const from = json(a);
        const to = json(b);
        expect(applyPatch(from, diffJson(from, to))).toEqual(to);
      }),
      { ...PROPERTY_LIMITS, numRuns: 500 },
    );
  });
});
