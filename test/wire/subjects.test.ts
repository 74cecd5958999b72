import { describe, expect, it } from "vitest";
import {
  buildCancelSubject,
  buildGenerateSubject,
  buildNodeGenerateSubject,
  buildNodeStatusKey,
} from "../../schema/wire/v2/index.ts";

describe("NATS subjects", () => {
  it("carry the wire version and keep the affinity path apart from the queue-group path", () => {
    expect(buildGenerateSubject()).toBe("molmesh.v2.generate");
    expect(buildNodeGenerateSubject("gpu-7")).toBe("molmesh.v2.node.gpu-7.generate");
    expect(buildCancelSubject("acme")).toBe("acme.v2.cancel");
    // Heartbeats are not versioned: nodes of every version share the bucket, and the edge filters by what they speak.
    expect(buildNodeStatusKey("gpu-7")).toBe("node.gpu-7");
  });

  it("refuse tokens that would change the subject's shape", () => {
    for (const bad of ["a.b", "*", ">", "", "x y"]) {
      expect(() => buildNodeGenerateSubject(bad)).toThrow(TypeError);
    }
  });
});
