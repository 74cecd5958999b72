import { escapePointer, type SchemaIssue } from "./json-schema-subset.ts";

/**
 * A schema sent without `strict: true`, brought into the decodable subset (json-schema-subset.ts) the way OpenAI
 * treats such schemas: as guidance, not a contract. OpenAI accepts any JSON Schema without `strict`; public tool
 * definitions are full of keywords a grammar cannot hold (`"format": "float"` on a number, `pattern`, `example`),
 * and refusing them refuses working clients. What is dropped only narrows or describes values, so every answer
 * decoded under the relaxed schema that also meets the dropped rules is valid under the original; the grammar holds
 * the rest. Structure the subset cannot express (`$ref`, `allOf`, `oneOf`, `not`, conditionals, tuples) is left in
 * and still refused by the subset check, naming the keyword: decoding could not follow it at all.
 *
 * Hand-written: no library maps a schema onto molmesh's subset, and the list is what the subset lacks.
 */

/** Value hints and narrowing rules a grammar does not hold: dropped without `strict`, refused with it. */
export const RELAXED_KEYWORDS: readonly string[] = [
  "format",
  "pattern",
  "multipleOf",
  "uniqueItems",
  "minProperties",
  "maxProperties",
  "contentEncoding",
  "contentMediaType",
  "deprecated",
  "readOnly",
  "writeOnly",
  "$id",
  "$comment",
  "$anchor",
  // OpenAPI 3.0 spellings that generators emit.
  "example",
  "nullable",
];

export interface RelaxedSchema {
  schema: Record<string, unknown>;
  /** The first keyword dropped, where it was: what a `strict: true` schema is refused for. */
  dropped: SchemaIssue | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The schema less {@link RELAXED_KEYWORDS}, an `additionalProperties` other than `false` (the grammar writes the
 * declared properties only, which such a schema also allows) and, on an object with none, `properties: {}` added.
 * Walks the subschemas the subset has (`properties`, `items`, `anyOf`); the input is not changed.
 */
export function relaxJsonSchema(schema: Record<string, unknown>): RelaxedSchema {
  let dropped: SchemaIssue | null = null;
  const note = (keyword: string, pointer: string) => {
    dropped ??= {
      code: "unsupported_keyword",
      keyword,
      pointer,
      message: `"${keyword}" is not supported`,
    };
  };
  const relax = (node: unknown, pointer: string): unknown => {
    if (!isRecord(node)) return node;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(node)) {
      const at = `${pointer}/${escapePointer(key)}`;
      if (RELAXED_KEYWORDS.includes(key) || (key === "additionalProperties" && value !== false)) {
        note(key, at);
      } else if (key === "properties" && isRecord(value)) {
        out[key] = Object.fromEntries(
          Object.entries(value).map(([name, sub]) => [name, relax(sub, `${at}/${escapePointer(name)}`)]),
        );
      } else if (key === "items") {
        out[key] = relax(value, at);
      } else if (key === "anyOf" && Array.isArray(value)) {
        out[key] = value.map((sub, i) => relax(sub, `${at}/${i}`));
      } else {
        out[key] = value;
      }
    }
    if (out["type"] === "object" && !("properties" in out)) {
      note("properties", `${pointer}/properties`);
      out["properties"] = {};
    }
    return out;
  };
  const relaxed = relax(schema, "") as Record<string, unknown>;
  return { schema: relaxed, dropped };
}
