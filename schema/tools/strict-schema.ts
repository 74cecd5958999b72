import { escapePointer, type SchemaIssue, type SubsetSchema } from "./json-schema-subset.ts";

/**
 * OpenAI's strict-mode rule on a subset schema: each object lists every property in `required`, refused in
 * OpenAI's wording (`context` names the path to the object). OpenAI also refuses an absent
 * `additionalProperties`; molmesh reads it as false (the subset refuses any other value, and decoding never
 * adds a property), so strict schemas that leave it out keep working.
 */
export function checkStrictSchema(schema: SubsetSchema): SchemaIssue | null {
  return strictIssue(schema, [], "");
}

function strictIssue(schema: SubsetSchema, context: string[], pointer: string): SchemaIssue | null {
  const at = (path: string[]): string =>
    `In context=(${path.map((p) => `'${p}'`).join(", ")}${path.length === 1 ? "," : ""})`;
  const issue = (keyword: string, message: string): SchemaIssue => ({
    code: "invalid_schema",
    keyword,
    pointer: `${pointer}/${keyword}`,
    message: `${at(context)}, ${message}`,
  });
  if ("anyOf" in schema) {
    for (const [i, option] of schema.anyOf.entries()) {
      const found = strictIssue(option, [...context, "anyOf", String(i)], `${pointer}/anyOf/${i}`);
      if (found) return found;
    }
    return null;
  }
  if ("enum" in schema || "const" in schema) return null;
  if (schema.type === "array") return strictIssue(schema.items, [...context, "items"], `${pointer}/items`);
  if (schema.type !== "object") return null;
  const names = Object.keys(schema.properties);
  const missing = names.find((name) => !(schema.required ?? []).includes(name));
  if (missing !== undefined) {
    return issue(
      "required",
      `'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`,
    );
  }
  for (const name of names) {
    const found = strictIssue(
      schema.properties[name] as SubsetSchema,
      [...context, "properties", name],
      `${pointer}/properties/${escapePointer(name)}`,
    );
    if (found) return found;
  }
  return null;
}
