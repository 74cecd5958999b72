/**
 * Where a benchmark's JSON holds no figure: null (JSON's NaN and Infinity), a non-finite number, or an empty
 * list. Smoke runs fail on any, since a figure that silently became NaN is the bug a smoke run is there to catch.
 */
export function findEmptyFigures(value: unknown, path = "$"): string[] {
  if (value === null || value === undefined) return [path];
  if (typeof value === "number") return Number.isFinite(value) ? [] : [path];
  if (Array.isArray(value)) {
    return value.length === 0 ? [path] : value.flatMap((item, i) => findEmptyFigures(item, `${path}[${i}]`));
  }
  if (typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => findEmptyFigures(item, `${path}.${key}`));
  }
  return [];
}
