import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ToolCallTextScanner,
  TOOL_CALL_MARKER,
  type ToolSpec,
  type ToolTextEvent,
} from "../../schema/tools/tool-call-text.ts";

const tools: ToolSpec[] = [
  { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } },
  {
    name: "add",
    parameters: { type: "object", properties: { a: { type: "integer" }, b: { type: "integer" } } },
  },
];

/** Splits `text` at the given cut points, as an engine's chunks would. */
function chunk(text: string, cuts: number[]): string[] {
  const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let last = 0;
  for (const point of [...points, text.length]) {
    pieces.push(text.slice(last, point));
    last = point;
  }
  return pieces;
}

function scan(pieces: string[]): { events: ToolTextEvent[]; scanner: ToolCallTextScanner } {
  const scanner = new ToolCallTextScanner();
  return { events: pieces.flatMap((piece) => scanner.push(piece)), scanner };
}

describe("ToolCallTextScanner", () => {
  const single = `${TOOL_CALL_MARKER}{"name": "get_weather", "arguments": {"city": "Oslo \\"}{\\" x"}}`;
  const parallel = `${TOOL_CALL_MARKER}[{"name":"add","arguments":{"a":1,"b":2}}]`;
  const twoCalls = `${TOOL_CALL_MARKER}[{"name": "add", "arguments": {"a": 1, "b": 2}},\n {"name": "get_weather", "arguments": {"city": "{["}}]`;

  it("streams each call's arguments exactly, however the text is chunked", () => {
    fc.assert(
      fc.property(fc.array(fc.nat(), { maxLength: 12 }), (cuts) => {
        for (const text of [single, parallel, twoCalls]) {
          const { events, scanner } = scan(chunk(text, cuts));
          expect(events.every((e) => e.kind === "call")).toBe(true);
          const outcome = scanner.finish(tools);
          if (outcome.kind !== "calls") throw new Error("expected calls");
          const parsed = JSON.parse(text.slice(TOOL_CALL_MARKER.length)) as unknown;
          const items = (Array.isArray(parsed) ? parsed : [parsed]) as Array<{
            name: string;
            arguments: unknown;
          }>;
          expect(outcome.calls.map((c) => c.name)).toEqual(items.map((i) => i.name));
          outcome.calls.forEach((call, index) => {
            const joined = events
              .flatMap((e) => (e.kind === "call" && e.index === index ? [e.argumentsDelta] : []))
              .join("");
            expect(joined).toBe(call.arguments);
            expect(JSON.parse(call.arguments)).toEqual(items[index]?.arguments);
            for (const e of events)
              if (e.kind === "call" && e.index === index) expect(e.name).toBe(call.name);
          });
        }
      }),
      { numRuns: 100 },
    );
  });

  it("passes plain text through, holding back only what could still be the marker", () => {
    const { events, scanner } = scan(["<tool", "s are fun"]);
    expect(events).toEqual([{ kind: "text", delta: "<tools are fun" }]);
    expect(scanner.finish(tools)).toEqual({ kind: "text", text: "<tools are fun" });
    expect(scan(["Hello", " world"]).events).toHaveLength(2);
  });

  it("refuses a call of an unknown tool or with arguments outside the schema", () => {
    expect(() =>
      scan([`${TOOL_CALL_MARKER}{"name": "nope", "arguments": {}}`]).scanner.finish(tools),
    ).toThrow(/no known tool/);
    expect(() =>
      scan([`${TOOL_CALL_MARKER}{"name": "add", "arguments": {"a": 1}}`]).scanner.finish(tools),
    ).toThrow(/arguments/);
    expect(() => scan([`${TOOL_CALL_MARKER}{"name": "add", "argu`]).scanner.finish(tools)).toThrow(/JSON/);
  });
});
