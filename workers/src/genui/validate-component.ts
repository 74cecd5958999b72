import { parse, type Node as AcornNode, type Program } from "acorn";
import { ancestor } from "acorn-walk";
import { transform } from "sucrase";
import {
  GENUI_ELEMENTS,
  GENUI_FORBIDDEN_PROPS,
  GENUI_MAX_SOURCE_BYTES,
  GENUI_MODULES,
  GENUI_URL_PROPS,
  isInlineUrl,
} from "./component-contract.ts";

/** By module name: a name the source imports is any string, so a lookup may miss. */
const ALLOWED_IMPORTS: Partial<Record<string, readonly string[]>> = GENUI_MODULES;

/**
 * The static half of the GenUI boundary: bytes → UTF-8 text → sucrase (JSX/TS → JS, line numbers preserved) →
 * acorn syntax tree → rule checks. It is a first, explainable verdict, not the boundary itself: anything it cannot
 * see (names built at run time, loops that only never end for some inputs) is contained by the frame (SES
 * compartment, sandboxed cross-origin iframe, header CSP, watchdog). Pure: no I/O, runs in workerd and Node alike.
 */

export type GenuiRuleId =
  | "source-too-large"
  | "source-not-utf8"
  | "syntax-error"
  | "import-not-allowed"
  | "import-name-unknown"
  | "dynamic-import"
  | "forbidden-global"
  | "forbidden-property"
  | "forbidden-element"
  | "forbidden-prop"
  | "external-url"
  | "unbounded-loop"
  | "no-default-export"
  | "default-export-not-function";

export interface GenuiFinding {
  rule: GenuiRuleId;
  message: string;
  /** 1-based line of the source (sucrase keeps lines); column is 1-based in the compiled line, so approximate. */
  line: number;
  column: number;
}

export interface GenuiValidationReport {
  status: "valid" | "rejected";
  bytes: number;
  findings: GenuiFinding[];
  /** Module specifiers the component imports. */
  imports: string[];
  validator: string;
}

export interface GenuiValidation {
  report: GenuiValidationReport;
  /** CommonJS-shaped code for the frame's compartment (`require`, `exports`); only for a valid component. */
  compiled: string | undefined;
}

const VALIDATOR = "molmesh-genui/1 (sucrase 3.35.1, acorn 8.19.0)";

/** Globals that reach the network, storage, other frames, navigation, or code from strings. */
const FORBIDDEN_GLOBALS = new Set([
  ...["fetch", "XMLHttpRequest", "WebSocket", "EventSource", "WebTransport", "RTCPeerConnection"],
  ...["Image", "Worker", "SharedWorker", "importScripts", "localStorage", "sessionStorage", "indexedDB"],
  ...["caches", "cookieStore", "eval", "Function", "window", "self", "document", "top", "parent", "opener"],
  ...["frames", "frameElement", "location", "history", "navigator", "open", "postMessage", "require"],
  ...["module", "exports", "process", "setTimeout", "setInterval"],
]);

/** Property names that lead from any object to the same places (or to `Function` via a constructor chain). */
const FORBIDDEN_PROPERTIES = new Set([
  ...[
    "cookie",
    "localStorage",
    "sessionStorage",
    "indexedDB",
    "serviceWorker",
    "write",
    "writeln",
    "location",
  ],
  ...["top", "parent", "opener", "frames", "frameElement", "constructor", "__proto__", "prototype"],
  ...["defaultView", "ownerDocument", "nativeEvent", "view", "contentWindow", "contentDocument", "fetch"],
  ...["eval", "sendBeacon", "open", "postMessage", "__defineGetter__", "__lookupGetter__"],
]);

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

type AnyNode = AcornNode & Record<string, unknown>;
const at = (node: AcornNode) => ({
  line: node.loc?.start.line ?? 1,
  column: (node.loc?.start.column ?? 0) + 1,
});

/** Validates one component source (raw request bytes or text). */
export function validateComponent(source: Uint8Array | string): GenuiValidation {
  const bytes = typeof source === "string" ? new TextEncoder().encode(source) : source;
  const reject = (finding: GenuiFinding): GenuiValidation => ({
    report: {
      status: "rejected",
      bytes: bytes.byteLength,
      findings: [finding],
      imports: [],
      validator: VALIDATOR,
    },
    compiled: undefined,
  });
  if (bytes.byteLength > GENUI_MAX_SOURCE_BYTES)
    return reject({
      rule: "source-too-large",
      message: `The component is ${bytes.byteLength} bytes; the limit is ${GENUI_MAX_SOURCE_BYTES}.`,
      line: 1,
      column: 1,
    });
  let text: string;
  try {
    // A string cannot hold invalid bytes, but it can hold lone surrogates (JSON "\ud800"), which UTF-8 cannot encode.
    if (typeof source === "string" && LONE_SURROGATE.test(source)) throw new Error("lone surrogate");
    text = typeof source === "string" ? source : utf8.decode(source);
  } catch {
    return reject({
      rule: "source-not-utf8",
      message: "The component is not valid UTF-8.",
      line: 1,
      column: 1,
    });
  }

  let esm: string;
  let program: Program;
  try {
    esm = transform(text, {
      transforms: ["jsx", "typescript"],
      jsxRuntime: "classic",
      production: true,
      disableESTransforms: true,
      keepUnusedImports: true,
    }).code;
    program = parse(esm, { ecmaVersion: "latest", sourceType: "module", locations: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const loc = /\((\d+):(\d+)\)/.exec(message);
    return reject({
      rule: "syntax-error",
      message: `Syntax error: ${message}`,
      line: loc ? Number(loc[1]) : 1,
      column: loc ? Number(loc[2]) + 1 : 1,
    });
  }

  const findings = checkProgram(program);
  const imports = [
    ...new Set(program.body.flatMap((s) => (s.type === "ImportDeclaration" ? [String(s.source.value)] : []))),
  ];
  const valid = findings.length === 0;
  return {
    report: {
      status: valid ? "valid" : "rejected",
      bytes: bytes.byteLength,
      findings,
      imports,
      validator: VALIDATOR,
    },
    compiled: valid
      ? transform(esm, { transforms: ["imports"], production: true, keepUnusedImports: true }).code
      : undefined,
  };
}

/** A string the expression always evaluates to (literals, `+`, templates, `[…].join(…)`), else undefined. */
function foldString(node: AnyNode | null | undefined): string | undefined {
  if (!node) return undefined;
  switch (node.type) {
    case "Literal":
      return typeof node.value === "string" || typeof node.value === "number"
        ? String(node.value)
        : undefined;
    case "TemplateLiteral": {
      const quasis = node.quasis as { value: { cooked: string | null } }[];
      const parts = (node.expressions as AnyNode[]).map(foldString);
      if (parts.some((p) => p === undefined)) return undefined;
      return quasis.map((q, i) => (q.value.cooked ?? "") + (parts[i] ?? "")).join("");
    }
    case "BinaryExpression": {
      if (node.operator !== "+") return undefined;
      const left = foldString(node.left as AnyNode);
      const right = foldString(node.right as AnyNode);
      return left === undefined || right === undefined ? undefined : left + right;
    }
    case "CallExpression": {
      const callee = node.callee as AnyNode;
      if (callee.type !== "MemberExpression" || (callee.property as AnyNode).name !== "join")
        return undefined;
      const array = callee.object as AnyNode;
      if (array.type !== "ArrayExpression") return undefined;
      const items = (array.elements as AnyNode[]).map(foldString);
      const args = node.arguments as AnyNode[];
      const separator = args.length === 0 ? "," : foldString(args[0]);
      if (separator === undefined || items.some((i) => i === undefined)) return undefined;
      return items.join(separator);
    }
    default:
      return undefined;
  }
}

const isAlwaysTrue = (test: AnyNode | null | undefined) =>
  !test ||
  (test.type === "Literal" && Boolean(test.value)) ||
  (test.type === "UnaryExpression" && test.operator === "!" && (test.argument as AnyNode).type === "Literal");

const LOOPS = new Set([
  "WhileStatement",
  "DoWhileStatement",
  "ForStatement",
  "ForInStatement",
  "ForOfStatement",
]);
const FUNCTIONS = new Set(["FunctionDeclaration", "FunctionExpression", "ArrowFunctionExpression"]);

/** Whether a loop body has a way out: `return`/`throw`, or a `break` that targets this loop. */
function hasExit(body: AnyNode): boolean {
  let found = false;
  const visit = (node: unknown, depth: { loop: number; switch: number }): void => {
    if (found || !node || typeof node !== "object") return;
    if (Array.isArray(node)) {
      node.forEach((n) => visit(n, depth));
      return;
    }
    const n = node as AnyNode;
    if (typeof n.type !== "string") return;
    if (FUNCTIONS.has(n.type)) return;
    if (n.type === "ReturnStatement" || n.type === "ThrowStatement") return void (found = true);
    if (n.type === "BreakStatement" && (n.label || (depth.loop === 0 && depth.switch === 0)))
      return void (found = true);
    const next = {
      loop: depth.loop + (LOOPS.has(n.type) ? 1 : 0),
      switch: depth.switch + (n.type === "SwitchStatement" ? 1 : 0),
    };
    for (const [key, value] of Object.entries(n)) if (key !== "loc" && key !== "type") visit(value, next);
  };
  visit(body, { loop: 0, switch: 0 });
  return found;
}

function checkProgram(program: Program): GenuiFinding[] {
  const findings: GenuiFinding[] = [];
  const add = (rule: GenuiRuleId, node: AcornNode, message: string) =>
    findings.push({ rule, message, ...at(node) });
  const topLevelFunctions = new Set<string>();
  for (const statement of program.body) {
    if (statement.type === "FunctionDeclaration") topLevelFunctions.add(statement.id.name);
    if (statement.type === "VariableDeclaration")
      for (const d of statement.declarations)
        if (d.id.type === "Identifier" && d.init && FUNCTIONS.has(d.init.type))
          topLevelFunctions.add(d.id.name);
  }

  let defaultExport: AnyNode | undefined;
  for (const statement of program.body as unknown as AnyNode[]) {
    if (statement.type === "ExportDefaultDeclaration") defaultExport = statement.declaration as AnyNode;
    if (statement.type === "ExportNamedDeclaration")
      for (const s of statement.specifiers as AnyNode[])
        if ((s.exported as AnyNode).name === "default") defaultExport = s.local as AnyNode;
    if (
      statement.type === "ExportAllDeclaration" ||
      (statement.type === "ExportNamedDeclaration" && statement.source)
    )
      add("import-not-allowed", statement, "Re-exports from other modules are not allowed.");
    if (statement.type !== "ImportDeclaration") continue;
    const from = String((statement.source as AnyNode).value);
    const allowed = ALLOWED_IMPORTS[from];
    if (!allowed) {
      add(
        "import-not-allowed",
        statement,
        `Import of "${from}": only "react" and "@molmesh/ui" are allowed.`,
      );
      continue;
    }
    for (const s of statement.specifiers as AnyNode[]) {
      const name =
        s.type === "ImportSpecifier"
          ? String((s.imported as AnyNode).name ?? (s.imported as AnyNode).value)
          : s.type === "ImportDefaultSpecifier"
            ? "default"
            : "*";
      if (name === "*" || !allowed.includes(name))
        add("import-name-unknown", s, `"${from}" has no export "${name}" for components.`);
    }
  }
  if (!defaultExport)
    add("no-default-export", program, "The module must `export default` a function component.");
  else if (
    !FUNCTIONS.has(defaultExport.type) &&
    !(defaultExport.type === "Identifier" && topLevelFunctions.has(String(defaultExport.name)))
  )
    add("default-export-not-function", defaultExport, "The default export must be a function component.");

  ancestor(program, {
    ImportExpression(node) {
      add("dynamic-import", node, "Dynamic import() is not allowed.");
    },
    Identifier(node, _state, ancestors) {
      if (!FORBIDDEN_GLOBALS.has(node.name)) return;
      const parent = ancestors[ancestors.length - 2] as AnyNode | undefined;
      // acorn-walk also visits some non-reference positions as Identifier (import specifiers, export names).
      if (parent && /^(Import|Export)/.test(parent.type)) return;
      add("forbidden-global", node, `\`${node.name}\` is not available to components.`);
    },
    // acorn-walk visits an assignment's target as a pattern, not as Identifier: `location = …` writes the global.
    AssignmentExpression(node) {
      if (node.left.type === "Identifier" && FORBIDDEN_GLOBALS.has(node.left.name))
        add("forbidden-global", node.left, `\`${node.left.name}\` is not available to components.`);
    },
    MemberExpression(node) {
      const n = node as unknown as AnyNode;
      const name = node.computed ? foldString(n.property as AnyNode) : String((n.property as AnyNode).name);
      if (
        name !== undefined &&
        (FORBIDDEN_PROPERTIES.has(name) || (node.computed && FORBIDDEN_GLOBALS.has(name)))
      )
        add("forbidden-property", node.property, `Property \`${name}\` is not available to components.`);
    },
    CallExpression(node) {
      const callee = node.callee as unknown as AnyNode;
      const isCreate =
        (callee.type === "MemberExpression" && (callee.property as AnyNode).name === "createElement") ||
        (callee.type === "Identifier" && callee.name === "createElement");
      if (!isCreate) return;
      const [type, props] = node.arguments as unknown as AnyNode[];
      const tag = type?.type === "Literal" && typeof type.value === "string" ? type.value : undefined;
      if (tag !== undefined && !GENUI_ELEMENTS.has(tag))
        add(
          "forbidden-element",
          type as AcornNode,
          `<${tag}> is not allowed (it can load, navigate or submit).`,
        );
      if (props?.type !== "ObjectExpression") return;
      for (const p of props.properties as AnyNode[]) {
        if (p.type !== "Property") continue;
        const key = p.computed
          ? foldString(p.key as AnyNode)
          : String((p.key as AnyNode).name ?? (p.key as AnyNode).value);
        if (key === undefined) continue;
        if (GENUI_FORBIDDEN_PROPS.has(key)) add("forbidden-prop", p, `The prop \`${key}\` is not allowed.`);
        const value = foldString(p.value as AnyNode);
        if (GENUI_URL_PROPS.has(key) && value !== undefined && !isInlineUrl(value))
          add(
            "external-url",
            p,
            `\`${key}\` may only hold a data: or blob: URL, not "${value.slice(0, 80)}".`,
          );
      }
    },
    WhileStatement(node) {
      if (isAlwaysTrue(node.test as unknown as AnyNode) && !hasExit(node.body as unknown as AnyNode))
        add(
          "unbounded-loop",
          node,
          "This loop has a constant condition and no way out; it would never return.",
        );
    },
    DoWhileStatement(node) {
      if (isAlwaysTrue(node.test as unknown as AnyNode) && !hasExit(node.body as unknown as AnyNode))
        add(
          "unbounded-loop",
          node,
          "This loop has a constant condition and no way out; it would never return.",
        );
    },
    ForStatement(node) {
      if (isAlwaysTrue(node.test as unknown as AnyNode) && !hasExit(node.body as unknown as AnyNode))
        add("unbounded-loop", node, "This loop has no condition and no way out; it would never return.");
    },
  });
  return findings.sort((a, b) => a.line - b.line || a.column - b.column);
}
