import { describe, expect, it } from "vitest";
import type { AppDeps } from "../../workers/src/app/app-deps.ts";
import { createApp } from "../../workers/src/app/create-app.ts";
import type { RequestLogLine } from "../../workers/src/app/request-telemetry.ts";

/** The real app; only what the probed routes touch is real, the rest fails loudly. */
function createLoggedApp(debug: boolean) {
  const lines: RequestLogLine[] = [];
  const deps = {
    readFleetHealth: () => {
      throw new TypeError("fleet object unreachable", { cause: new Error("socket hang up") });
    },
    authenticate: () => Promise.resolve(undefined),
    adminToken: undefined,
    now: () => Date.now(),
    telemetry: { debug, write: (line: RequestLogLine) => void lines.push(line) },
  } as unknown as AppDeps;
  return { app: createApp(() => deps), lines };
}

describe("request log lines", () => {
  it("a 500 keeps its cause in the line while the client gets the generic envelope", async () => {
    const { app, lines } = createLoggedApp(false);
    const response = await app.request("/readyz");
    expect(response.status).toBe(500);
    const body = await response.text();
    expect(body).not.toContain("unreachable");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "error",
      route: "/readyz",
      status: 500,
      errorCode: "internal_error",
      requestId: response.headers.get("x-request-id"),
    });
    expect(lines[0]?.cause).toBe("TypeError: fleet object unreachable <- Error: socket hang up");
  });

  it("keeps request bodies out unless debug logging is on", async () => {
    const post = {
      method: "POST",
      body: '{"input":"private words"}',
      headers: { "content-type": "application/json" },
    };
    const quiet = createLoggedApp(false);
    await quiet.app.request("/nowhere", post);
    expect(JSON.stringify(quiet.lines)).not.toContain("private words");
    const debug = createLoggedApp(true);
    await debug.app.request("/nowhere", post);
    expect(debug.lines[0]?.requestBody).toBe('{"input":"private words"}');
  });

  it("joins a client's trace and starts one otherwise", async () => {
    const { app, lines } = createLoggedApp(false);
    await app.request("/livez", {
      headers: { traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" },
    });
    await app.request("/livez", { headers: { traceparent: "garbage" } });
    expect(lines[0]?.traceId).toBe("0af7651916cd43dd8448eb211c80319c");
    // No SDK in this process: the API's no-op tracer cannot start a trace, so a bad header leaves none.
    expect(lines[1]).not.toHaveProperty("traceId");
  });
});
