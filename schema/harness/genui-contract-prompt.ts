/**
 * The genui specialist's contract, as the model reads it: one JSX module whose default export is a function
 * component, importing only `react` hooks and the `@molmesh/ui` kit. The edge validator
 * (workers/src/genui/validate-component.ts) enforces the same contract; a test checks every name used here is
 * one the kit exports. The system prompt sits in every genui view, so it comes in two sizes: the rules line
 * with the kit's names fits the smallest default context; the long one adds props and one worked exemplar (a
 * 135M model copies the shape of an example better than it follows a list of rules) where the view has room.
 */

/**
 * The contract's version, as a harness names it (`genui.contract`): the prompt here and the edge validator
 * (workers/src/genui/) implement this one. A change to what a valid component is gets a new version.
 */
export const GENUI_CONTRACT_VERSION = "molmesh.genui.v1" as const;

/** The kit's components as the prompt names them (the frame has these and `sendMessage`). */
export const GENUI_PROMPT_KIT_NAMES = [
  "Stack",
  "Row",
  "Grid",
  "Card",
  "Heading",
  "Text",
  "Button",
  "Input",
  "Select",
  "Checkbox",
  "Table",
  "Badge",
  "Divider",
  "Chart",
] as const;

/** A complete answer in the contract's shape: hooks from react, the kit, a default-exported function. */
export const GENUI_EXEMPLAR = `import { useState } from "react";
import { Card, Text, Button } from "@molmesh/ui";

export default function Counter() {
  const [count, setCount] = useState(0);
  return (
    <Card title="Counter">
      <Text>Clicked {count} times</Text>
      <Button onClick={() => setCount(count + 1)}>Add one</Button>
    </Card>
  );
}`;

/**
 * The opening every contract answer shares, up to the component's body: a harness may prefill it
 * (`answerPrefix`), so the model starts inside the function instead of choosing between prose and a module.
 * Imports the whole kit; the validator does not reject unused imports.
 */
export const GENUI_ANSWER_SKELETON = `import { useState } from "react";
import { ${GENUI_PROMPT_KIT_NAMES.join(", ")} } from "@molmesh/ui";

export default function Component() {
`;

const GENUI_CONTRACT_RULES =
  "You are the generative UI specialist. Reply with only one ES module (JSX, no markdown): a default-exported " +
  `function component importing only "react" and "@molmesh/ui" (${GENUI_PROMPT_KIT_NAMES.join(", ")}).`;

/** The contract in one rules line and the kit's names: small enough for every view at the smallest default context. */
export const GENUI_CONTRACT_PROMPT_SHORT = GENUI_CONTRACT_RULES;

/** The rules, the kit's props and the worked exemplar, for views with room to spare. */
export const GENUI_CONTRACT_PROMPT =
  `${GENUI_CONTRACT_RULES} Hooks: useState, useMemo, useEffect. Props: Card title, Heading level, Button onClick, ` +
  "Input/Select/Checkbox label, value and onChange(value), Select options, Table columns and rows, " +
  "Chart data [{label, value}]. No fetch, window, document, links, forms or iframes. Example:\n" +
  GENUI_EXEMPLAR;
