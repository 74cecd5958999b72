import * as React from "react";
import type { GENUI_REACT_EXPORTS } from "../component-contract.ts";
import {
  GENUI_ELEMENTS,
  GENUI_FORBIDDEN_PROPS,
  GENUI_URL_PROPS,
  isInlineUrl,
} from "../component-contract.ts";

/**
 * The React a component sees: hooks plus a `createElement` that only builds what the contract allows. Every element
 * the component returns is rebuilt through it, including objects it forged with `$$typeof` (a forged `<a href>`,
 * portal or lazy would otherwise reach React DOM directly). Event handlers get a plain, hardened snapshot instead
 * of the DOM event, and refs are dropped: both are paths from component code back to `window`.
 */

type AnyFunction = (...args: never[]) => unknown;
type Props = Record<string, unknown>;

export interface SafeReact {
  react: Record<(typeof GENUI_REACT_EXPORTS)[number], unknown>;
  /** Wraps a component's default export so its output is sanitized like any child's. */
  wrapComponent(component: AnyFunction): React.FunctionComponent<Props>;
}

// Forged by component code or made by React: nothing about its fields is known.
const isElementLike = (value: unknown): value is { type: unknown; key: unknown; props?: Props } =>
  typeof value === "object" && value !== null && "$$typeof" in value;

const MAX_DEPTH = 8;
const MAX_VALUES = 10_000;

/**
 * Own enumerable string-keyed data properties, read through their descriptors: a getter is never called, so
 * component code cannot answer one thing when checked and another when used. (A Proxy's traps do run, but all
 * they can hand back is a descriptor whose value is then copied.)
 */
function ownDataEntries(value: object): Array<[string, unknown]> {
  const entries: Array<[string, unknown]> = [];
  for (const key of Reflect.ownKeys(value)) {
    // `__proto__` as an own key (JSON.parse makes one) would set the copy's prototype when assigned.
    if (typeof key !== "string" || key === "__proto__") continue;
    const descriptor = Object.getOwnPropertyDescriptor(value, key);
    if (descriptor?.enumerable && "value" in descriptor) entries.push([key, descriptor.value]);
  }
  return entries;
}

/**
 * A kit prop as JSON-like data: primitives, arrays and plain objects, copied into fresh frozen containers (their
 * prototypes are lockdown's, already hardened), with elements rebuilt by `sanitizeNode`. Functions, symbols,
 * accessors and objects of any other class are left out; past MAX_DEPTH levels or MAX_VALUES values the prop is
 * refused with an error the frame reports.
 */
export function copyKitData(value: unknown, sanitizeNode: (node: unknown) => unknown, prop: string): unknown {
  let budget = MAX_VALUES;
  const copy = (v: unknown, depth: number): unknown => {
    if (--budget < 0) throw new RangeError(`kit prop "${prop}" holds more than ${MAX_VALUES} values`);
    if (v === null || typeof v !== "object") return ["function", "symbol"].includes(typeof v) ? undefined : v;
    if (isElementLike(v)) return sanitizeNode(v);
    if (depth >= MAX_DEPTH)
      throw new RangeError(`kit prop "${prop}" is nested deeper than ${MAX_DEPTH} levels`);
    const proto: unknown = Object.getPrototypeOf(v);
    if (Array.isArray(v) && proto === Array.prototype) {
      const length = Object.getOwnPropertyDescriptor(v, "length")?.value as unknown;
      if (typeof length !== "number" || length > budget)
        throw new RangeError(`kit prop "${prop}" holds more than ${MAX_VALUES} values`);
      const out: unknown[] = [];
      for (let i = 0; i < length; i++) {
        const d = Object.getOwnPropertyDescriptor(v, i);
        out.push(d && "value" in d ? (copy(d.value, depth + 1) ?? null) : null);
      }
      return Object.freeze(out);
    }
    if (proto !== Object.prototype && proto !== null) return undefined;
    const out: Props = {};
    for (const [key, item] of ownDataEntries(v)) {
      const copied = copy(item, depth + 1);
      if (copied !== undefined) out[key] = copied;
    }
    return Object.freeze(out);
  };
  return copy(value, 0);
}

/** `trusted`: the kit's components, which take data (copied by `copyKitData`) and `on*` callbacks. */
export function createSafeReact(
  trusted: ReadonlySet<unknown>,
  harden: <T>(value: T) => T,
  onHandlerError: (error: unknown) => void,
): SafeReact {
  const wrapped = new WeakMap<AnyFunction, React.FunctionComponent<Props>>();
  const blessed = new WeakSet<object>();

  const wrapComponent = (component: AnyFunction): React.FunctionComponent<Props> => {
    let safe = wrapped.get(component);
    if (!safe) {
      const render = component as unknown as (props: Props) => unknown;
      safe = (props: Props) => sanitizeNode(render(props)) as React.ReactNode;
      wrapped.set(component, safe);
    }
    return safe;
  };

  const sanitizeNode = (node: unknown): unknown => {
    if (node === null || node === undefined || typeof node === "boolean") return node;
    if (typeof node === "string" || typeof node === "number" || typeof node === "bigint") return node;
    if (Array.isArray(node)) return node.map(sanitizeNode);
    if (isElementLike(node)) {
      const { children, ...props }: Props = node.props ?? {};
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- any key is stringified, as React's own createElement does
      const key = node.key === null || node.key === undefined ? {} : { key: String(node.key) };
      return createElement(node.type, { ...props, ...key }, ...(children === undefined ? [] : [children]));
    }
    // A plain object, a function, a thenable or a symbol: not a child a component may hand to React DOM.
    return null;
  };

  const snapshot = (event: unknown) => {
    const e = event as { type?: unknown; key?: unknown; target?: { value?: unknown; checked?: unknown } };
    return harden({
      type: typeof e.type === "string" ? e.type : "",
      key: typeof e.key === "string" ? e.key : undefined,
      value: typeof e.target?.value === "string" ? e.target.value : undefined,
      checked: typeof e.target?.checked === "boolean" ? e.target.checked : undefined,
    });
  };

  const hostProps = (props: Props): Props => {
    const out: Props = {};
    for (const [name, value] of Object.entries(props)) {
      if (GENUI_FORBIDDEN_PROPS.has(name) || name === "children") continue;
      if (/^on[A-Z]/.test(name)) {
        if (typeof value === "function")
          out[name] = (event: unknown) => {
            // Caught here: past this frame the browser would report only "Script error." (opaque origin).
            try {
              (value as (e: unknown) => void)(snapshot(event));
            } catch (error) {
              onHandlerError(error);
            }
          };
      } else if (name === "style") {
        if (typeof value === "object" && value !== null)
          out.style = Object.fromEntries(
            Object.entries(value).filter(([, v]) => typeof v === "string" || typeof v === "number"),
          );
      } else if (GENUI_URL_PROPS.has(name)) {
        if (typeof value === "string" && isInlineUrl(value)) out[name] = value;
      } else if (["string", "number", "boolean"].includes(typeof value)) out[name] = value;
    }
    return out;
  };

  function createElement(type: unknown, props?: Props | null, ...children: unknown[]): unknown {
    const safeChildren = children.map(sanitizeNode);
    const given = props ?? {};
    if (typeof type === "string") {
      if (!GENUI_ELEMENTS.has(type)) return null;
      return React.createElement(type, hostProps(given), ...(safeChildren as React.ReactNode[]));
    }
    if (type === React.Fragment)
      return React.createElement(
        React.Fragment,
        "key" in given ? { key: String(given.key) } : null,
        ...(safeChildren as React.ReactNode[]),
      );
    if (trusted.has(type) || (typeof type === "object" && type !== null && blessed.has(type))) {
      const kitProps: Props = {};
      for (const [name, value] of ownDataEntries(given)) {
        if (name === "ref") continue;
        // The kit's callbacks (onClick, onChange) hand back only plain values; no other prop may be code.
        if (/^on[A-Z]/.test(name)) {
          if (typeof value === "function") kitProps[name] = value;
        } else {
          const copied = copyKitData(value, sanitizeNode, name);
          if (copied !== undefined) kitProps[name] = copied;
        }
      }
      return React.createElement(
        type as React.FunctionComponent<Props>,
        kitProps,
        ...(safeChildren as React.ReactNode[]),
      );
    }
    if (typeof type === "function") {
      const { ref: _ref, ...rest } = given;
      return React.createElement(
        wrapComponent(type as AnyFunction),
        rest,
        ...(safeChildren as React.ReactNode[]),
      );
    }
    return null;
  }

  const memo = (component: unknown, compare?: unknown) => {
    if (typeof component !== "function") throw new TypeError("memo() takes a function component");
    const type = React.memo(
      wrapComponent(component as AnyFunction),
      typeof compare === "function" ? (compare as (a: Props, b: Props) => boolean) : undefined,
    );
    blessed.add(type);
    return type;
  };

  const react = {
    createElement,
    Fragment: React.Fragment,
    memo,
    useState: React.useState,
    useReducer: React.useReducer,
    useEffect: React.useEffect,
    useLayoutEffect: React.useLayoutEffect,
    useMemo: React.useMemo,
    useCallback: React.useCallback,
    // A ref object is harmless on its own: no element can receive it, so it never holds a DOM node.
    useRef: React.useRef,
    useId: React.useId,
    useTransition: React.useTransition,
    useDeferredValue: React.useDeferredValue,
  };
  return { react: { ...react, default: react }, wrapComponent };
}
