import { describe, expect, it } from "vitest";
import {
  buildCancelSubject,
  buildHopSubject,
  buildNodeHopSubject,
  buildNodeStatusKey,
} from "../../schema/wire/v2/index.ts";

describe("NATS subjects", () => {
  it("carry the wire version and keep the affinity path apart from the queue-group path", () => {
    expect(buildHopSubject("route")).toBe("molmesh.v1.hop.route");
    expect(buildNodeHopSubject("gpu-7", "answer")).toBe("molmesh.v1.node.gpu-7.hop.answer");
    expect(buildCancelSubject("acme")).toBe("acme.v1.cancel");
    expect(buildNodeStatusKey("gpu-7")).toBe("node.gpu-7");
  });

  it("refuse tokens that would change the subject's shape", () => {
    for (const bad of ["a.b", "*", ">", "", "x y"]) {
      expect(() => buildNodeHopSubject(bad, "route")).toThrow(TypeError);
    }
  });
});
