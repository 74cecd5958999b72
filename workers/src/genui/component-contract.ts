/**
 * The GenUI component contract, shared by the validator (in the Worker) and the frame runtime (in the browser): one
 * ES module whose default export is a function component, importing only these names from `react` and the kit.
 * The frame enforces the same lists at run time, so a name the validator lets through is one the frame provides.
 */

export const GENUI_MAX_SOURCE_BYTES = 64 * 1024;

/** What `react` gives a component: hooks and element creation, no DOM access (no refs to DOM nodes, no portals). */
export const GENUI_REACT_EXPORTS = [
  "default",
  "createElement",
  "Fragment",
  "memo",
  "useState",
  "useReducer",
  "useEffect",
  "useLayoutEffect",
  "useMemo",
  "useCallback",
  "useRef",
  "useId",
  "useTransition",
  "useDeferredValue",
] as const;

/** `@molmesh/ui`: small plain components; their callbacks receive values, never DOM events. */
export const GENUI_KIT_EXPORTS = [
  "Stack",
  "Row",
  "Grid",
  "Text",
  "Heading",
  "Button",
  "Input",
  "Select",
  "Checkbox",
  "Card",
  "Table",
  "Badge",
  "Divider",
  "Chart",
  "sendMessage",
] as const;
export type GenuiKitName = (typeof GENUI_KIT_EXPORTS)[number];

export const GENUI_MODULES = { react: GENUI_REACT_EXPORTS, "@molmesh/ui": GENUI_KIT_EXPORTS } as const;

/**
 * HTML and SVG elements a component may create. Left out: anything that loads, navigates or submits (`a`, `form`,
 * `iframe`, `object`, `embed`, `video`, `audio`, `source`, `link`, `meta`, `base`, `script`, `style`, `template`).
 */
export const GENUI_ELEMENTS = new Set([
  ...["div", "span", "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "dl", "dt", "dd"],
  ...["strong", "em", "b", "i", "u", "s", "small", "sub", "sup", "code", "pre", "kbd", "mark", "br", "hr"],
  ...["blockquote", "section", "header", "footer", "main", "nav", "article", "aside", "figure", "figcaption"],
  ...["details", "summary", "progress", "meter", "label", "button", "input", "select", "option", "textarea"],
  ...["table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col", "img"],
  ...[
    "svg",
    "g",
    "path",
    "rect",
    "circle",
    "ellipse",
    "line",
    "polyline",
    "polygon",
    "text",
    "tspan",
    "title",
  ],
  ...["defs", "linearGradient", "radialGradient", "stop", "clipPath"],
]);

/** Props that reach the DOM as code, markup, a node handle or a navigation; the frame drops them all. */
export const GENUI_FORBIDDEN_PROPS = new Set([
  "ref",
  "dangerouslySetInnerHTML",
  "srcDoc",
  "httpEquiv",
  "action",
  "formAction",
  "href",
  "xlinkHref",
  "ping",
  "target",
]);

/** Props that carry a URL: only `data:` and `blob:` ones load (the frame's CSP says the same for images). */
export const GENUI_URL_PROPS = new Set(["src", "srcSet", "poster", "data", "background", "lowsrc"]);

export const isInlineUrl = (value: string): boolean => /^\s*(data|blob):/i.test(value);

/** Every JSON-RPC method the host and the frame exchange (MCP Apps names; `molmesh/…` are ours). */
export const GENUI_RPC = {
  initialize: "ui/initialize",
  initialized: "ui/notifications/initialized",
  sizeChanged: "ui/notifications/size-changed",
  message: "ui/message",
  ping: "ping",
  error: "molmesh/component-error",
} as const;
