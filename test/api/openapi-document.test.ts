import { describe, expect, it } from "vitest";
import type { AppDeps } from "../../workers/src/app/app-deps.ts";
import { createApp } from "../../workers/src/app/create-app.ts";

describe("GET /openapi.json", () => {
  it("documents the stored-response and conversation-item routes", async () => {
    const app = createApp(() => ({ now: () => Date.now() }) as unknown as AppDeps);
    const started = Date.now();
    const response = await app.request("/openapi.json");
    expect(response.status).toBe(200);
    const document = (await response.json()) as { paths: Record<string, Record<string, unknown>> };
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        "/v1/responses",
        "/v1/responses/{id}",
        "/v1/responses/{id}/cancel",
        "/v1/responses/{id}/input_items",
        "/v1/conversations/{id}/items/{item_id}",
      ]),
    );
    expect(Object.keys(document.paths["/v1/conversations/{id}"] ?? {})).toEqual(
      expect.arrayContaining(["get", "post", "delete"]),
    );
    expect(Object.keys(document.paths["/v1/conversations/{id}/items"] ?? {})).toEqual(
      expect.arrayContaining(["get", "post"]),
    );
  });
});
