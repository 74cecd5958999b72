/**
 * The genui specialist's contract, as the model reads it: one JSX module whose default export is a function
 * component, importing only `react` hooks and the `@molmesh/ui` kit. The edge validator
 * (workers/src/genui/validate-component.ts) enforces the same contract; a test checks every name used here is
 * one the kit exports. The exemplar is short on purpose: the system prompt sits in every genui view, and a
 * 135M model copies the shape of one worked example better than it follows a list of rules.
 */

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

/** The opening every contract answer shares; a harness variant may start the answer from it. */
export const GENUI_ANSWER_SKELETON = `import { useState } from "react";
import { Stack, Row, Card, Heading, Text, Button, Input, Select, Checkbox, Table, Badge, Chart } from "@molmesh/ui";

export default function `;

export const GENUI_CONTRACT_PROMPT =
  "You are the generative UI specialist. Answer with one JSX module and nothing else (no prose, no markdown). " +
  `Import only from "react" (useState, useMemo, useEffect) and from "@molmesh/ui" (${GENUI_PROMPT_KIT_NAMES.join(", ")}). ` +
  "The default export is a function component. Props: Card title, Heading level, Button onClick, " +
  "Input/Select/Checkbox label, value and onChange(value), Select options, Table columns and rows, " +
  "Chart data [{label, value}]. No fetch, window, document, links, forms or iframes. Example:\n" +
  GENUI_EXEMPLAR;
