import { TOOL_CALL_MARKER } from "../../../schema/tools/tool-call-text.ts";

/**
 * Function calls and their results as view text. A call reads exactly as the model decodes one under the
 * tools grammar (the marker, then `{"name", "arguments"}`, an array for several), so the specialist sees its
 * own calls in the form it writes them; a result is the next turn's user line.
 */

export interface CallText {
  name: string;
  /** JSON text, as decoded (it validates against the tool's schema). */
  arguments: string;
}

/** Arguments are spliced in as sent, so the view holds the decoded bytes; text that is not JSON is quoted. */
function renderArguments(text: string): string {
  try {
    JSON.parse(text);
    return text;
  } catch {
    return JSON.stringify(text);
  }
}

export function renderToolCallText(calls: readonly CallText[]): string {
  const objects = calls.map(
    (call) => `{"name": ${JSON.stringify(call.name)}, "arguments": ${renderArguments(call.arguments)}}`,
  );
  return TOOL_CALL_MARKER + (objects.length === 1 ? (objects[0] ?? "") : `[${objects.join(", ")}]`);
}

/** One tool result as a user line; `name` is the function's when the call is known here. */
export function renderToolResultText(callId: string, name: string | undefined, output: string): string {
  return `tool result (${name === undefined ? callId : `${name}, ${callId}`}): ${output}`;
}
