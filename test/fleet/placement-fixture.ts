import type { NodeStatus } from "../../schema/wire/v2/index.ts";
import type { PlacementChoice, PlacementQuestion } from "../../workers/src/fleet/choose-node.ts";

/** Where record-placement-beats.ts writes the fixture, relative to the repository root. */
export const PLACEMENT_FIXTURE = "test/fleet/recorded-placements.json";

/** A placement question as JSON: sets and maps as arrays and records. */
export type RecordedQuestion = {
  /** Index into {@link PlacementFixture.snapshots}: the fleet the question is asked of. */
  snapshot: number;
  question: Omit<PlacementQuestion, "nodes" | "exclude" | "recentHops"> & {
    exclude?: string[];
    recentHops?: Record<string, number>;
  };
  /** What the edge decided when the fixture was recorded. */
  decision: PlacementChoice;
};

export interface PlacementFixture {
  recordedWith: string;
  recordedAt: string;
  /** Heartbeats as the bucket delivered them, each kept once. */
  beats: NodeStatus[];
  /** Fleets at one instant: indices into `beats`, one per live node. */
  snapshots: Array<{ beats: number[] }>;
  questions: RecordedQuestion[];
}
