/** The chat stream's terminator; the openai client stops reading at it. */
export const SSE_DONE_FRAME = "data: [DONE]\n\n";

/** One SSE frame. Each line of `data` gets its own `data:` field, so a newline can never end the event early. */
export function encodeSseEvent(data: string, event?: string): string {
  const head = event === undefined ? "" : `event: ${event}\n`;
  return `${head}${data
    .split(/\r\n|\r|\n/)
    .map((line) => `data: ${line}`)
    .join("\n")}\n\n`;
}

/** Clients ignore comment lines; they keep proxies from closing an idle stream while a hop thinks. */
export function encodeSseComment(text: string): string {
  return `: ${text.replace(/[\r\n]+/g, " ")}\n\n`;
}
