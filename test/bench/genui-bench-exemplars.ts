/** The worked components of the genui bench: the four-exemplar variant's prompt and the calibration row. */
import { GENUI_EXEMPLAR } from "../../schema/harness/genui-contract-prompt.ts";

export /** Three more worked answers besides the counter: a form, a table and a chart, the shapes the prompts ask for most. */
const MORE_EXEMPLARS = `import { useState } from "react";
import { Card, Input, Button, Text } from "@molmesh/ui";

export default function SignupForm() {
  const [email, setEmail] = useState("");
  const [sent, setSent] = useState(false);
  return (
    <Card title="Sign up">
      <Input label="Email" value={email} onChange={setEmail} />
      <Button onClick={() => setSent(true)}>Send</Button>
      {sent && <Text>Thanks, {email}</Text>}
    </Card>
  );
}

import { Card, Table } from "@molmesh/ui";

export default function Team() {
  return (
    <Card title="Team">
      <Table columns={["Name", "Role"]} rows={[["Ada", "Engineer"], ["Bob", "Designer"]]} />
    </Card>
  );
}

import { Card, Chart } from "@molmesh/ui";

export default function Sales() {
  const data = [{ label: "Jan", value: 12 }, { label: "Feb", value: 19 }, { label: "Mar", value: 7 }];
  return (
    <Card title="Sales">
      <Chart data={data} />
    </Card>
  );
}`;

/**
 * The calibration row: the worked exemplars the prompts show (not model output), sent through the same edge
 * checks, store and Chromium render as the answers, to show what the pipeline does with a correct module.
 */
export const CALIBRATION_SOURCES = [GENUI_EXEMPLAR, ...MORE_EXEMPLARS.split(/\n\n(?=import )/)];
