/**
 * JSON with object keys sorted recursively (UTF-16 code unit order) and no whitespace, so equal documents
 * serialise to equal bytes whatever order their keys were written in. Arrays keep their order: it means
 * something (the route labels, the stop strings).
 */
export function canonicalizeJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((item) => (item === undefined ? "null" : canonicalizeJson(item))).join(",")}]`;
  }
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>;
    const fields = Object.keys(record)
      .sort()
      .filter((key) => record[key] !== undefined)
      .map((key) => `${JSON.stringify(key)}:${canonicalizeJson(record[key])}`);
    return `{${fields.join(",")}}`;
  }
  const text = JSON.stringify(value);
  if (text === undefined) throw new TypeError(`not JSON-serialisable: ${typeof value}`);
  return text;
}
