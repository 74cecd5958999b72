import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { NodeStatus } from "../../schema/wire/v2/index.ts";
import { chooseNode } from "../../workers/src/fleet/choose-node.ts";
import { REPO_ROOT } from "../harness/paths.ts";
import { PLACEMENT_FIXTURE, type PlacementFixture } from "./placement-fixture.ts";

/**
 * Placement over recorded heartbeats: a real three-node fleet's beats under real turns, and the decisions the edge
 * made on them when they were recorded (record-placement-beats.ts). Whatever shape placement takes, it must decide
 * the same on the same beats.
 */
const fixture = JSON.parse(readFileSync(join(REPO_ROOT, PLACEMENT_FIXTURE), "utf8")) as PlacementFixture;

describe("placement on recorded heartbeats", () => {
  it("holds a fleet that was busy, with every kind of decision", () => {
    const reasons = new Set(fixture.questions.map((q) => q.decision.reason));
    expect([...reasons].sort()).toEqual(["least-loaded", "queue-group", "spill", "warm"]);
    const busy = fixture.beats.filter((beat) => beat.inFlight > 0 || beat.queueDepth > 0);
    expect(busy.length).toBeGreaterThan(fixture.beats.length / 4);
  });

  it("decides as it did when they were recorded, question by question", () => {
    const decisions = fixture.questions.map(({ snapshot, question }) => {
      const nodes = (fixture.snapshots[snapshot]?.beats ?? []).map((i) => fixture.beats[i] as NodeStatus);
      const { exclude, recentHops, ...plain } = question;
      return chooseNode({
        ...plain,
        nodes,
        ...(exclude ? { exclude: new Set(exclude) } : {}),
        ...(recentHops ? { recentHops: new Map(Object.entries(recentHops)) } : {}),
      });
    });
    expect(decisions).toEqual(fixture.questions.map((q) => q.decision));
  });
});
