import type * as React from "react";
import { describe, expect, it } from "vitest";
import { createSafeReact } from "../../workers/src/genui/frame/safe-react.ts";

/**
 * The membrane between a component and the kit, in Node (no SES: `harden` is Object.freeze here). A kit component
 * stands in for Chart and Select; what its props hold after `createElement` is what the real kit would receive.
 */

const Kit = (_props: Record<string, unknown>) => null;
const { react } = createSafeReact(new Set([Kit]), Object.freeze, () => undefined);
const createElement = react.createElement as (
  type: unknown,
  props?: object | null,
  ...c: unknown[]
) => unknown;
const kitProps = (props: object) =>
  (createElement(Kit, props) as React.ReactElement<Record<string, unknown>>).props;

describe("kit props across the membrane", () => {
  it("keeps plain objects inside arrays, as fresh frozen copies", () => {
    const data = [
      { label: "Mon", value: 21 },
      { label: "Tue", value: 24, extra: { deep: [1, "x", null, true] } },
    ];
    const options = ["plain", { label: "Paris", value: "paris" }];
    const props = kitProps({ data, options, height: 90 });
    expect(props.data).toEqual(data);
    expect(props.options).toEqual(options);
    expect(props.height).toBe(90);
    expect(props.data).not.toBe(data);
    expect((props.data as unknown[])[0]).not.toBe(data[0]);
    expect(Object.isFrozen(props.data)).toBe(true);
    expect(Object.isFrozen((props.data as unknown[])[1])).toBe(true);
    // Later changes on the component's side do not reach what the kit holds.
    data[0] = { label: "changed", value: 0 };
    expect((props.data as Array<{ label: string }>)[0]?.label).toBe("Mon");
  });

  it("never calls a getter and drops accessors, functions, symbols and class instances", () => {
    let reads = 0;
    const sneaky = {
      label: "a",
      get value() {
        reads++;
        return 1;
      },
    };
    class Point {
      x = 1;
    }
    const props = kitProps({
      data: [sneaky, { label: "f", value: () => 1, tag: Symbol("s") }, new Point(), () => 2, new Map()],
      render: () => "code",
    });
    expect(reads).toBe(0);
    expect(props.data).toEqual([{ label: "a" }, { label: "f" }, null, null, null]);
    expect("render" in props).toBe(false);
  });

  it("copies a proxy's data once without its get trap, and refuses ones that nest too deep or hold too much", () => {
    const gets: PropertyKey[] = [];
    const proxy = new Proxy([{ label: "p", value: 3 }], {
      get(target, key, receiver) {
        gets.push(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const props = kitProps({ data: proxy });
    expect(gets).toEqual([]);
    expect(props.data).toEqual([{ label: "p", value: 3 }]);
    expect(props.data).not.toBe(proxy);
    const objectProto = kitProps({
      data: JSON.parse('[{"__proto__": {"label": "x"}, "value": 1}]') as unknown,
    });
    expect(objectProto.data).toEqual([{ value: 1 }]);
    expect(Object.getPrototypeOf((objectProto.data as object[])[0])).toBe(Object.prototype);

    let deep: unknown = 1;
    for (let i = 0; i < 20; i++) deep = [deep];
    expect(() => kitProps({ data: deep })).toThrow(/nested deeper/);
    expect(() => kitProps({ data: Array.from({ length: 20_000 }, (_, i) => i) })).toThrow(/more than/);
    const huge = new Proxy([], {
      getOwnPropertyDescriptor: (target, key) =>
        key === "length"
          ? { value: 1e9, writable: true, enumerable: false, configurable: false }
          : Reflect.getOwnPropertyDescriptor(target, key),
    });
    expect(() => kitProps({ data: huge })).toThrow(/more than/);
  });

  it("passes on* callbacks as they are, rebuilds elements in data, drops refs", () => {
    const onChange = (value: string) => value;
    const props = kitProps({
      onChange,
      onClick: "not code",
      ref: { current: null },
      title: createElement("a", { href: "https://example.com" }, "x"),
      items: [createElement("b", null, "bold"), createElement("script", null, "x")],
    });
    expect(props.onChange).toBe(onChange);
    expect("onClick" in props).toBe(false);
    expect("ref" in props).toBe(false);
    // <a> is outside the contract: gone, like any host element the contract does not list.
    expect(props.title).toBeNull();
    const [bold, script] = props.items as React.ReactElement[];
    expect(bold?.type).toBe("b");
    expect(script).toBeNull();
  });
});
