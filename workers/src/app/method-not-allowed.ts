import type { Hono } from "hono";

/**
 * The methods `app` serves at `path`, for a 405's `Allow` header; empty when it serves none (a 404). HEAD goes
 * wherever GET does: Hono answers it from the GET handler.
 */
export function readAllowedMethods(app: Pick<Hono, "routes">, path: string): string[] {
  const methods = new Set<string>();
  for (const route of app.routes) {
    // Middleware (`app.use`) is registered for ALL methods; it serves nothing by itself.
    if (route.method !== "ALL" && matchesRoutePath(route.path, path)) methods.add(route.method);
  }
  if (methods.has("GET")) methods.add("HEAD");
  return [...methods].sort();
}

/** Hono's route paths as the app uses them: literal segments, `:name` for one segment, a trailing `*`. */
function matchesRoutePath(pattern: string, path: string): boolean {
  const want = pattern.split("/");
  const got = path.split("/");
  for (const [index, segment] of want.entries()) {
    if (segment === "*" && index === want.length - 1) return true;
    const actual = got[index];
    if (actual === undefined) return false;
    if (segment.startsWith(":") ? actual === "" : segment !== actual) return false;
  }
  return want.length === got.length;
}
