import { describe, expect, it } from "vitest";
import { BadRequestError, UnknownAdapterError } from "../../schema/wire/v2/index.ts";
import { formatAdapterName } from "../../schema/wire/v2/adapter-name.ts";
import type { EngineAdapterInfo } from "../../gpu-nodes/src/engine/engine.ts";
import { HeldAdapters, readLoadRequest, reloadHeld } from "../../gpu-nodes/src/engine/held-adapters.ts";

const revision = (label: string, hex: string): { info: EngineAdapterInfo } => {
  const rev = `sha256:${hex}`;
  return { info: { id: label, name: formatAdapterName(label, rev), revision: rev, lora: true } };
};
const chatOld = revision("chat", "aaaaaaaa11112222");
const chatCanary = revision("chat", "bbbbbbbb33334444");
const coding = revision("coding", "cccccccc55556666");

function holding(...revisions: Array<{ info: EngineAdapterInfo }>) {
  const held = new HeldAdapters<{ info: EngineAdapterInfo }>();
  for (const r of revisions) held.add(r);
  return held;
}

describe("HeldAdapters", () => {
  it("sends a bare label to its oldest revision held and a versioned name (or a prefix of it) to that one", () => {
    const held = holding(chatOld, chatCanary, coding);
    expect(held.resolve("chat")).toBe(chatOld);
    expect(held.resolve("chat@bbbbbbbb3333")).toBe(chatCanary);
    expect(held.resolve("chat@bbbbbbbb")).toBe(chatCanary);
    expect(held.resolve("chat@dddddddd")).toBeUndefined();
    expect(held.resolve("coding@aaaaaaaa")).toBeUndefined();
    expect(held.resolve("agent")).toBeUndefined();
    expect(held.resolve("Not A Name")).toBeUndefined();
    expect(held.list()).toEqual([chatOld, chatCanary, coding]);
  });

  it("refuses a retired revision at once and hands its label to the next oldest", () => {
    const held = holding(chatOld, chatCanary);
    expect(held.retire("chat@aaaaaaaa")).toBe(chatOld);
    expect(() => held.claim("chat@aaaaaaaa1111", "is not loaded")).toThrow(UnknownAdapterError);
    expect(held.claim("chat", "is not loaded").revision).toBe(chatCanary);
    expect(() => held.retire("chat@aaaaaaaa")).toThrow(UnknownAdapterError);
    expect(() => held.retire("chat")).toThrow(BadRequestError);
    expect(held.list()).toEqual([chatCanary]);
  });

  it("drains a retired revision only when its last claim is released", async () => {
    const held = holding(chatOld, coding);
    const first = held.claim("chat", "is not loaded");
    const second = held.claim(chatOld.info.name, "is not loaded");
    held.claim("coding", "is not loaded").release();
    const retired = held.retire(chatOld.info.name);
    let drained = false;
    const draining = held.drained(retired).then(() => {
      drained = true;
    });
    first.release();
    first.release();
    await Promise.resolve();
    expect(drained).toBe(false);
    second.release();
    await draining;
    expect(drained).toBe(true);
    // Nothing claimed: drained at once.
    await held.drained(held.retire(coding.info.name));
  });

  it("checks a load's label and scale, and refuses a held revision at another scale", () => {
    expect(readLoadRequest({ label: "chat", path: "/x.gguf" })).toEqual({ label: "chat", scale: 1 });
    expect(() => readLoadRequest({ label: "Chat!" })).toThrow(BadRequestError);
    expect(() => readLoadRequest({ label: "chat", scale: Number.NaN })).toThrow(BadRequestError);
    expect(reloadHeld(chatOld.info, 1, 1)).toBe(chatOld.info);
    expect(() => reloadHeld(chatOld.info, 1, 0.5)).toThrow(/held at scale 1/);
  });
});
