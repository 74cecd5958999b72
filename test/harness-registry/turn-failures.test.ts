import { describe, expect, it } from "vitest";
import { buildTurnRecord } from "../../workers/src/conversation/build-turn-record.ts";
import type { TurnRecord } from "../../workers/src/conversation/turn-record.ts";
import type { TimelineEventOf } from "../../workers/src/db/timeline-event.ts";
import {
  FAILURE_CATEGORIES,
  categorizeStepEvent,
  readTurnFailures,
} from "../../workers/src/harness-registry/turn-failures.ts";

/** A step event as a step kind appends it; output-check steps put `{ check, valid }` in `data`. */
const step = (
  verdict: "pass" | "fail" | undefined,
  data?: Record<string, unknown>,
  kind = "output-check",
): TimelineEventOf<"step"> => ({
  type: "step",
  turnId: "t1",
  step: kind,
  kind,
  ...(verdict ? { verdict } : {}),
  ...(data ? { data } : {}),
});

const opened: TurnRecord = buildTurnRecord("conv_1", [
  { type: "user_message", turnId: "t1", text: "hi", harnessHash: "sha256:x", seq: 1, createdAt: 1_000 },
]);
const record = (status: TurnRecord["status"], genui?: "valid" | "rejected"): TurnRecord => ({
  ...opened,
  status,
  mol: { ...opened.mol, ...(genui ? { genui: { status: genui, findings: 0, summary: "" } } : {}) },
});

describe("a turn's failure categories", () => {
  it("names an output check's failure by its data.check, any other fail verdict check_failed", () => {
    expect(categorizeStepEvent(step("fail", { check: "json_output", valid: false }))).toBe(
      "json_output_invalid",
    );
    expect(categorizeStepEvent(step("fail", { check: "tool_arguments", valid: false }))).toBe(
      "tool_arguments_invalid",
    );
    expect(categorizeStepEvent(step("fail", { check: "something_else" }))).toBe("check_failed");
    expect(categorizeStepEvent(step("fail", { code: "engine_failure", message: "x" }, "repair"))).toBe(
      "check_failed",
    );
    expect(categorizeStepEvent(step("fail"))).toBe("check_failed");
  });

  it("finds no failure in a passing or verdict-less step", () => {
    expect(categorizeStepEvent(step("pass", { check: "json_output", valid: true }))).toBeUndefined();
    expect(categorizeStepEvent(step(undefined, { check: "json_output" }))).toBeUndefined();
  });

  it("gives each category once, in order, with the turn's own status and GenUI verdict", () => {
    expect(readTurnFailures(record("completed"), [])).toEqual([]);
    expect(readTurnFailures(record("failed"), [])).toEqual(["turn_failed"]);
    expect(readTurnFailures(record("completed", "rejected"), [])).toEqual(["genui_rejected"]);
    expect(readTurnFailures(record("completed", "valid"), [])).toEqual([]);
    expect(
      readTurnFailures(record("completed", "rejected"), [
        "check_failed",
        "json_output_invalid",
        "json_output_invalid",
        "tool_arguments_invalid",
      ]),
    ).toEqual(["genui_rejected", "json_output_invalid", "tool_arguments_invalid", "check_failed"]);
    expect(FAILURE_CATEGORIES).toContain("feedback_negative");
  });

  it("does not count a cancelled or running turn", () => {
    expect(readTurnFailures(record("cancelled"), ["check_failed"])).toBeUndefined();
    expect(readTurnFailures(record("in_progress"), [])).toBeUndefined();
  });
});
